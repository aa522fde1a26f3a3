// The keys of how a run trains and what it keeps: [optim], [schedule], [checkpoint],
// [early_stopping], [distributed], [train] and [logging].
#include "config/experiment_schema_parts.h"

#include "config/schema_keys.h"

namespace plugtrain {

std::vector<ConfigKey> training_keys() {
  using namespace schema;
  using E = Experiment;
  return {
      choice_key<OptimizerName>("optim.name", field(&E::optim, &OptimConfig::name),
                                "sgd, adam, adamw, rmsprop or lion"),
      resumable(choice_or_auto_key<OptimizerImpl>(
          "optim.impl", field(&E::optim, &OptimConfig::impl),
          "how the optimizer steps: fused (one ATen kernel per step for all parameters: sgd, adam, "
          "adamw), foreach (a few multi-tensor kernels: every optimizer), loop (the same operations one "
          "parameter at a time, as torch::optim's loop), or auto (fused where the device has the kernel, else "
          "foreach); the same state, so a "
          "checkpoint resumes with any of them")),
      key("optim.lr", field(&E::optim, &OptimConfig::lr), "learning rate", greater_than(0)),
      key("optim.momentum", field(&E::optim, &OptimConfig::momentum), "sgd, rmsprop: momentum", between(0, 1)),
      key("optim.nesterov", field(&E::optim, &OptimConfig::nesterov), "sgd: Nesterov momentum (needs momentum > 0)"),
      key("optim.weight_decay", field(&E::optim, &OptimConfig::weight_decay),
          "weight decay (decoupled for adamw and lion)", at_least(0)),
      choice_key<DecayScope>(
          "optim.decay", field(&E::optim, &OptimConfig::decay),
          "which parameters weight_decay applies to: all, or matrices (those of two or more dimensions: no biases "
          "and no norm scales, as nanoGPT and timm do)"),
      key("optim.betas", field(&E::optim, &OptimConfig::betas),
          "adam, adamw, lion: [beta1, beta2] (default [0.9, 0.999]; lion [0.9, 0.99])", betas_check()),
      key("optim.eps", field(&E::optim, &OptimConfig::eps), "adam, adamw, rmsprop: epsilon", greater_than(0)),
      key("optim.alpha", field(&E::optim, &OptimConfig::alpha), "rmsprop: smoothing constant", between(0, 1)),
      choice_key<LrScaling>(
          "optim.lr_scaling", field(&E::optim, &OptimConfig::lr_scaling),
          "when the global batch differs from the batch optim.lr is meant for: none, linear (lr x k) or sqrt "
          "(lr x sqrt(k)), k = global batch / optim.lr_batch_size (default data.batch_size)"),
      key("optim.lr_batch_size", field(&E::optim, &OptimConfig::lr_batch_size),
          "the batch optim.lr is meant for, the k = 1 of lr_scaling (0: data.batch_size; needed with \"auto\")",
          at_least(0)),

      choice_key<ScheduleName>(
          "schedule.name", field(&E::schedule, &ScheduleConfig::name),
          "none, step, multistep, cosine (to min_lr), linear (to min_lr) or onecycle "
          "(PyTorch's OneCycleLR: up from lr / div_factor to lr over pct_start of the steps, then down to that / "
          "final_div_factor); every one is applied per optimizer step"),
      key("schedule.step_size", field(&E::schedule, &ScheduleConfig::step_size), "step: epochs between decays",
          greater_than(0)),
      key("schedule.gamma", field(&E::schedule, &ScheduleConfig::gamma), "step, multistep: decay factor",
          greater_than(0)),
      key("schedule.milestones", field(&E::schedule, &ScheduleConfig::milestones),
          "multistep: epochs at which lr is multiplied by gamma", all_positive()),
      key("schedule.warmup_epochs", field(&E::schedule, &ScheduleConfig::warmup_epochs),
          "linear warm-up from 0 over this many epochs", at_least(0)),
      key("schedule.warmup_steps", field(&E::schedule, &ScheduleConfig::warmup_steps),
          "linear warm-up from 0 over this many optimizer steps (instead of warmup_epochs)", at_least(0)),
      key("schedule.min_lr", field(&E::schedule, &ScheduleConfig::min_lr), "cosine, linear: final learning rate",
          at_least(0)),
      key("schedule.pct_start", field(&E::schedule, &ScheduleConfig::pct_start),
          "onecycle: share of the steps spent rising to lr", between(0.01, 0.99)),
      key("schedule.div_factor", field(&E::schedule, &ScheduleConfig::div_factor),
          "onecycle: the first lr is lr / div_factor", at_least(1)),
      key("schedule.final_div_factor", field(&E::schedule, &ScheduleConfig::final_div_factor),
          "onecycle: the last lr is the first / final_div_factor", at_least(1)),

      resumable(key("checkpoint.folder", field(&E::checkpoint, &CheckpointConfig::folder),
                    "where checkpoints go (empty: the run folder's checkpoints/)")),
      resumable(choice_key<CheckpointSave>("checkpoint.save", field(&E::checkpoint, &CheckpointConfig::save),
                                           "none; last (every epoch, last.ckpt); best (best.ckpt by monitor, plus "
                                           "last.ckpt); every (epoch-N.ckpt every N epochs, plus last.ckpt)")),
      resumable(key("checkpoint.every_n_epochs", field(&E::checkpoint, &CheckpointConfig::every_n_epochs),
                    "with save = \"every\": epochs between checkpoints", greater_than(0))),
      resumable(name_or_auto_key(
          "checkpoint.monitor", field(&E::checkpoint, &CheckpointConfig::monitor),
          "metric for save = \"best\": train_loss, test_loss, or train_/test_ and one of the task's metrics (auto: "
          "test_ and the task's headline metric, test_accuracy for classification)")),
      resumable(choice_or_auto_key<Direction>(
          "checkpoint.mode", field(&E::checkpoint, &CheckpointConfig::mode),
          "auto (the metric's own direction: max for accuracy, min for a loss or an error rate), max or min")),
      resumable(key("checkpoint.keep_last", field(&E::checkpoint, &CheckpointConfig::keep_last),
                    "with save = \"every\": keep the newest K epoch files (0: all)", at_least(0))),

      resumable(name_or_auto_key("early_stopping.monitor", field(&E::early_stopping, &EarlyStoppingConfig::monitor),
                                 "metric watched for early stopping, as checkpoint.monitor")),
      resumable(choice_or_auto_key<Direction>("early_stopping.mode",
                                              field(&E::early_stopping, &EarlyStoppingConfig::mode),
                                              "auto (the metric's own direction), max or min")),
      resumable(key("early_stopping.patience", field(&E::early_stopping, &EarlyStoppingConfig::patience),
                    "stop after this many evaluated epochs without improvement (0: off)", at_least(0))),
      resumable(key("early_stopping.min_delta", field(&E::early_stopping, &EarlyStoppingConfig::min_delta),
                    "smallest change that counts as improvement", at_least(0))),

      resumable(
          key("distributed.timeout", field(&E::distributed, &DistributedConfig::timeout),
              "seconds the ranks wait for each other (rendezvous, each collective) before naming the missing rank and "
              "stopping",
              greater_than(0))),
      resumable(name_or_auto_key(
          "distributed.interface", field(&E::distributed, &DistributedConfig::interface),
          "the network interface the ranks talk over, Gloo's and a backend's own collective's (\"ib0\", or several: "
          "\"eth0,eth1\"); auto: "
          "GLOO_SOCKET_IFNAME when set, else the one that carries this node's traffic to the rendezvous address")),
      resumable(key("distributed.bucket_mb", field(&E::distributed, &DistributedConfig::bucket_mb),
                    "ddp: gradient bucket size in MiB (all-reduced as backward fills it)", greater_than(0))),
      resumable(choice_or_auto_key<ShardLevel>(
          "distributed.shard", field(&E::distributed, &DistributedConfig::shard),
          "fsdp: what each rank keeps only its shard of: optimizer (its state; ZeRO-1), gradients (and the "
          "gradients; ZeRO-2), full (and the parameters, each unit gathered for its forward and backward; ZeRO-3); "
          "auto: full")),
      resumable(choice_key<ShardDtype>(
          "distributed.param_dtype", field(&E::distributed, &DistributedConfig::param_dtype),
          "fsdp: the type the parameters are gathered in and the model computes in: fp32, or bf16 (half the "
          "traffic and the gathered memory; the shards and the optimizer's state stay fp32)")),
      resumable(choice_key<ShardDtype>(
          "distributed.reduce_dtype", field(&E::distributed, &DistributedConfig::reduce_dtype),
          "fsdp: the type the gradients are summed over the ranks in: fp32 (also under bf16 parameters), or bf16")),

      resumable(key("train.epochs", field(&E::train, &TrainConfig::epochs), "number of epochs", greater_than(0))),
      key("train.max_steps", field(&E::train, &TrainConfig::max_steps),
          "stop after this many optimizer steps (0: no limit)", at_least(0)),
      key("train.steps_per_epoch", field(&E::train, &TrainConfig::steps_per_epoch),
          "batches an epoch takes from its shuffle of the training data (0: all of it); an epoch is then an "
          "evaluation interval, as Lightning's limit_train_batches (a language model's windows: nanoGPT's "
          "eval_interval)",
          at_least(0)),
      resumable(key("train.log_interval", field(&E::train, &TrainConfig::log_interval),
                    "print step loss and throughput every N steps (0: never)", at_least(0))),
      resumable(key("train.eval_every", field(&E::train, &TrainConfig::eval_every),
                    "evaluate every N epochs (the last always): the validation split where data.val_fraction sets one "
                    "or the data set has its own, else the test set",
                    greater_than(0))),
      resumable(
          key("train.test_every", field(&E::train, &TrainConfig::test_every),
              "with a validation split: evaluate the test set every N epochs as well (0: once, after the last epoch)",
              at_least(0))),
      key("train.grad_clip", field(&E::train, &TrainConfig::grad_clip), "clip the gradient norm to this value (0: off)",
          at_least(0)),
      key("train.accumulate_steps", field(&E::train, &TrainConfig::accumulate_steps),
          "micro-batches of data.batch_size per optimizer step (gradient accumulation): the effective batch is "
          "their product times the devices; ddp averages the gradients only in the last micro-batch; clipping and "
          "fp16 scaling act on the summed gradient",
          greater_than(0)),
      key("train.ema_decay", field(&E::train, &TrainConfig::ema_decay),
          "keep an exponential moving average of the weights with this decay (timm's ModelEmaV3; e.g. 0.9998), updated "
          "after each optimizer step and saved in checkpoints; 0: off",
          at_least_below(0, 1)),
      key("train.ema_warmup", field(&E::train, &TrainConfig::ema_warmup),
          "EMA: warm the decay up as timm does: min(ema_decay, 1 - t^(-2/3)) after optimizer step t + 1"),
      key("train.swa_start", field(&E::train, &TrainConfig::swa_start),
          "stochastic weight averaging from this epoch on: the weights at the end of each epoch join an equal average, "
          "which is evaluated (batch norm recomputed over the training set) and which the run ends with; 0: off",
          at_least(0)),
      key("train.swa_lr", field(&E::train, &TrainConfig::swa_lr),
          "SWA: the constant learning rate from train.swa_start on (0: the schedule's)", at_least(0)),
      resumable(
          key("train.ema_evaluate", field(&E::train, &TrainConfig::ema_evaluate),
              "EMA: evaluate (and so monitor, stop early and keep the best checkpoint) with the averaged weights")),
      resumable(key("train.threads", field(&E::train, &TrainConfig::threads),
                    "LibTorch intra-op threads (0: LibTorch's default)", at_least(0))),
      resumable(choice_key<OnNonfinite>(
          "train.on_nonfinite", field(&E::train, &TrainConfig::on_nonfinite),
          "a loss (or gradient) that is nan or inf: stop (with the step and the last good checkpoint) or "
          "skip_step (that batch changes nothing); fp16 always skips as its loss scaling does")),
      resumable(key("train.phase_timing", field(&E::train, &TrainConfig::phase_timing),
                    "time the phases of the training steps (data, copy, fwd, bwd, opt, other) and show their "
                    "shares each epoch")),
      resumable(key("train.profile", field(&E::train, &TrainConfig::profile),
                    "record train.profile_steps steps with LibTorch's profiler (Kineto) after train.profile_warmup: a "
                    "Chrome trace in <run folder>/profile/trace.json and the top operators (also --profile)")),
      resumable(key("train.profile_steps", field(&E::train, &TrainConfig::profile_steps),
                    "steps the profiler records (also --profile-steps)", greater_than(0))),
      resumable(key("train.profile_warmup", field(&E::train, &TrainConfig::profile_warmup),
                    "steps before the profiler starts", at_least(0))),
      resumable(boolean_or_default_key("train.tf32", field(&E::train, &TrainConfig::tf32),
                                       "NVIDIA GPUs: float32 matrix products and convolutions in TF32: true, false, or "
                                       "\"default\" (PyTorch's: convolutions yes, matrix products no)")),
      resumable(key("train.cudnn_benchmark", field(&E::train, &TrainConfig::cudnn_benchmark),
                    "NVIDIA GPUs: let cuDNN time its convolution algorithms once per shape and keep the fastest")),
      resumable(key("train.deterministic", field(&E::train, &TrainConfig::deterministic),
                    "deterministic algorithms: torch.use_deterministic_algorithms(True, warn_only=True) and "
                    "deterministic cuDNN without its autotuner, so two runs of one file give the same curve")),
      resumable(key("train.keep_host_memory", field(&E::train, &TrainConfig::keep_host_memory),
                    "training on the host CPU: keep freed memory in the heap for the next step instead of glibc "
                    "unmapping it and the kernel zeroing it again (false: glibc's own behaviour)")),
      resumable(choice_or_auto_key<MemoryFormatChoice>(
          "train.memory_format", field(&E::train, &TrainConfig::memory_format),
          "convolutional models and their batches: channels_last, contiguous, or auto (channels_last for "
          "a model with 2-d convolutions)")),
      resumable(boolean_or_auto_key(
          "train.graphs", field(&E::train, &TrainConfig::graphs),
          "record each full training step once as a device graph and replay it: true, false, or "
          "\"auto\" (where the backend records graphs and the run allows it; the log says why not)")),
      resumable(choice_key<ActivationCheckpointing>(
          "train.activation_checkpointing", field(&E::train, &TrainConfig::activation_checkpointing),
          "none, or blocks: each unit the model declares (the zoo's transformer and residual blocks) keeps only its "
          "input in forward and runs again in backward (less memory, about a third more compute; same losses)")),
      choice_key<PrecisionMode>("train.precision", field(&E::train, &TrainConfig::precision),
                                "fp32, bf16 (autocast) or fp16 (autocast with dynamic loss scaling)"),

      resumable(
          key("logging.loggers", field(&E::logging, &LoggingConfig::loggers),
              "loggers on without options (`plugtrain loggers`); a [logging.<name>] table switches that logger on with "
              "its options, MLFLOW_TRACKING_URI switches on mlflow; [] and no table: none (metrics.csv is always "
              "written)")),
  };
}

}  // namespace plugtrain
