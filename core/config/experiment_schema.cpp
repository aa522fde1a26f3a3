#include "config/experiment_schema.h"

#include "config/schema_keys.h"

namespace plugtrain {

const char* to_string(ConfigType t) {
  switch (t) {
    case ConfigType::integer: return "integer";
    case ConfigType::real: return "float";
    case ConfigType::boolean: return "boolean";
    case ConfigType::string: return "string";
    case ConfigType::integer_list: return "array of integers";
    case ConfigType::real_list: return "array of floats";
    case ConfigType::string_list: return "array of strings";
    case ConfigType::count_or_auto: return "integer or \"auto\"";
    case ConfigType::boolean_or_default: return "boolean or \"default\"";
    case ConfigType::boolean_or_auto: return "boolean or \"auto\"";
  }
  return "?";
}

const std::vector<std::string>& experiment_tables() {
  static const std::vector<std::string> tables = {"experiment", "backend",        "plugins", "model",
                                                  "data",       "optim",          "schedule", "train",
                                                  "checkpoint", "early_stopping", "distributed", "sweep"};
  return tables;
}

const std::vector<ConfigKey>& experiment_schema() {
  using namespace schema;
  using E = Experiment;
  static const std::vector<ConfigKey> schema = {
      key("experiment.name", &E::name, "run name; outputs go to the folder output/name", folder_name()),
      key("experiment.seed", &E::seed, "seed for weights, shuffling, augmentation and label noise"),
      resumable(key("experiment.output", &E::output, "folder for run outputs")),

      resumable(key("backend.name", &E::backend, "\"auto\" (best usable in `prefer` order) or a backend plugin name")),
      resumable(key("backend.select", &E::select,
                    "with name = \"auto\": priority (the first usable in prefer order) or fastest (a few timed steps "
                    "on each usable backend; the choice is cached per machine and experiment, --no-cache measures "
                    "again)",
                    one_of({"priority", "fastest"}))),
      resumable(key("backend.prefer", &E::prefer,
          "automatic selection order among usable backends (empty: every loaded backend by the priority its plugin "
          "declares)")),
      resumable(key("backend.disable", &E::disable, "backends never chosen (plugtrain run --no-gpu disables every one but the host CPU)")),
      resumable(key("backend.force", &E::force,
          "backends chosen automatically even where their plugin advises passing them over (the Apple GPU on M1/M2); "
          "force_<name> = true is the same")),
      resumable(count_or_auto_key("backend.devices", &E::devices,
                        "devices to train on: N, or \"auto\" (every GPU; one on the CPU); N > 1 starts N processes "
                        "(ddp) or N replicas (dp)")),
      resumable(key("backend.strategy", &E::strategy,
          "auto (ddp for several devices, else single), single, dp (replicas in one process), ddp (one process per "
          "device)",
          one_of({"auto", "single", "dp", "ddp"}))),

      resumable(key("plugins.paths", &E::plugin_paths, "extra plugin files or folders, searched after --plugin-path")),

      key("model.name", &E::model, "architecture name (see `plugtrain models`); other [model] keys are its options"),

      key("model.init", &E::model_init, "start from this Python state_dict file (torch.save(model.state_dict()))"),

      key("data.dataset", &E::dataset,
          "fashion-mnist, mnist (IDX files), cifar10, cifar100 (binary version), image-folder, tiny-imagenet or "
          "synthetic",
          one_of({"fashion-mnist", "mnist", "cifar10", "cifar100", "image-folder", "tiny-imagenet", "synthetic"})),
      resumable(key("data.path", &E::data_path,
                    "the data set's folder (cifar10/100: also the official .tar.gz archive itself)")),
      key("data.label", &E::data_label, "cifar100: fine (100 classes) or coarse (20 superclasses)",
          one_of({"fine", "coarse"})),
      key("data.image_size", &E::image_size,
          "image-folder, tiny-imagenet: side of the square samples the images are resized to (0: 64)", at_least(0)),
      resumable(key("data.cache", &E::data_cache,
                    "image-folder, tiny-imagenet: keep decoded images in memory (memory), decode every epoch (none), "
                    "or memory when they fit in half the free RAM (auto)",
                    one_of({"auto", "memory", "none"}))),
      resumable(count_zero_or_auto_key("data.workers", &E::data_workers,
                                       "loader threads that decode and augment (0: the training thread; \"auto\": "
                                       "the backend's choice; decoding a cache up front uses every core)")),
      resumable(boolean_or_auto_key(
          "data.on_device",
          &E::on_device,
          "keep the data set on the training device as bytes and shuffle, gather, crop, flip and normalise there "
          "(no copy per step): true, false, or \"auto\" (an accelerator, images in memory, only random_crop and "
          "horizontal_flip, and a quarter of its free memory holds them)")),
      resumable(count_zero_or_auto_key("data.prefetch", &E::data_prefetch,
                                       "batches prepared ahead of the one training (\"auto\": the backend's)")),
      key("data.skip_bad", &E::skip_bad, "skip images that cannot be decoded (and say how many) instead of stopping"),
      key("data.normalize", &E::normalize,
          "dataset (per-channel mean and std of the training set, printed, and stored beside the run as "
          "normalization.json: a resume normalises with those) or none; data.mean and data.std set them explicitly",
          one_of({"dataset", "none"})),
      key("data.mean", &E::data_mean, "explicit per-channel mean on the [0, 1] pixel scale (with data.std)"),
      key("data.std", &E::data_std, "explicit per-channel std on the [0, 1] pixel scale (with data.mean)"),
      count_or_auto_key("data.batch_size", &E::batch_size,
                        "training batch size per device (per process), or \"auto\": the largest power of two whose "
                        "trial steps fit the device's memory"),
      resumable(key("data.max_batch_size", &E::max_batch_size, "\"auto\" batch: the largest size tried",
                    greater_than(0))),
      resumable(key("data.min_batch_size", &E::min_batch_size,
                    "the smallest batch an out-of-memory error may halve down to (and \"auto\" may choose)",
                    greater_than(0))),
      resumable(key("data.memory_headroom", &E::memory_headroom,
                    "\"auto\" batch: the share of the device's memory left free", between(0, 0.9))),
      key("data.global_batch_size", &E::global_batch_size,
          "samples per optimizer step over all devices (0: batch_size x devices); sets the per-device batch",
          at_least(0)),
      resumable(key("data.test_batch_size", &E::test_batch_size, "evaluation batch size", greater_than(0))),
      key("data.augmentation", &E::augmentation,
          "applied in this order: any of random_crop, horizontal_flip, random_resized_crop, rotation, translate, "
          "color_jitter, random_erasing",
          one_of({"random_crop", "horizontal_flip", "random_resized_crop", "rotation", "translate", "color_jitter",
                  "random_erasing"})),
      key("data.crop_padding", &E::crop_padding, "random_crop: padding on each side, in pixels", at_least(0)),
      key("data.crop_padding_mode", &E::crop_padding_mode, "random_crop: constant (black), reflect or edge",
          one_of({"constant", "reflect", "edge"})),
      key("data.flip_p", &E::flip_p, "horizontal_flip: probability", between(0, 1)),
      key("data.resized_crop_scale", &E::resized_crop_scale, "random_resized_crop: [lo, hi] share of the area",
          ordered_pair(1e-6, 1)),
      key("data.resized_crop_ratio", &E::resized_crop_ratio, "random_resized_crop: [lo, hi] aspect ratio",
          ordered_pair(1e-6, 1e6)),
      key("data.rotation_degrees", &E::rotation_degrees, "rotation: angle drawn from [-d, d]", between(0, 180)),
      key("data.translate", &E::translate, "translate: [x, y] largest shift as a share of the width and height",
          ordered_pair(0, 1)),
      key("data.jitter_brightness", &E::jitter_brightness, "color_jitter: brightness factor in [1-b, 1+b]",
          at_least(0)),
      key("data.jitter_contrast", &E::jitter_contrast, "color_jitter: contrast factor in [1-c, 1+c]", at_least(0)),
      key("data.jitter_saturation", &E::jitter_saturation, "color_jitter: saturation factor in [1-s, 1+s]",
          at_least(0)),
      key("data.erasing_p", &E::erasing_p, "random_erasing: probability", between(0, 1)),
      key("data.erasing_scale", &E::erasing_scale, "random_erasing: [lo, hi] share of the area",
          ordered_pair(1e-6, 0.999)),
      key("data.erasing_ratio", &E::erasing_ratio, "random_erasing: [lo, hi] aspect ratio", ordered_pair(1e-6, 1e6)),
      key("data.label_noise", &E::label_noise, "fraction of training labels replaced at random (seeded)",
          between(0, 1)),
      key("data.train_subset", &E::train_subset, "use only the first N training samples (0: all)", at_least(0)),
      resumable(key("data.test_subset", &E::test_subset, "use only the first N test samples (0: all)", at_least(0))),
      key("data.synthetic_shape", &E::synthetic_shape, "synthetic: sample shape [C, H, W]", all_positive()),
      key("data.synthetic_classes", &E::synthetic_classes, "synthetic: number of classes", at_least(2)),
      key("data.synthetic_train_size", &E::synthetic_train_size, "synthetic: training samples", greater_than(0)),
      key("data.synthetic_test_size", &E::synthetic_test_size, "synthetic: test samples", greater_than(0)),

      key("optim.name", &E::optimizer, "sgd, adam, adamw, rmsprop or lion",
          one_of({"sgd", "adam", "adamw", "rmsprop", "lion"})),
      resumable(key("optim.impl", &E::optimizer_impl,
                    "how the optimizer steps: fused (one ATen kernel per step for all parameters: sgd, adam, "
                    "adamw), foreach (a few multi-tensor kernels: every optimizer), loop (torch::optim's per-parameter "
                    "loop), or auto (fused where the device has the kernel, else foreach); the same state, so a "
                    "checkpoint resumes with any of them",
                    one_of({"auto", "fused", "foreach", "loop"}))),
      key("optim.lr", &E::lr, "learning rate", greater_than(0)),
      key("optim.momentum", &E::momentum, "sgd, rmsprop: momentum", between(0, 1)),
      key("optim.nesterov", &E::nesterov, "sgd: Nesterov momentum (needs momentum > 0)"),
      key("optim.weight_decay", &E::weight_decay, "weight decay (decoupled for adamw and lion)", at_least(0)),
      key("optim.betas", &E::betas, "adam, adamw, lion: [beta1, beta2] (default [0.9, 0.999]; lion [0.9, 0.99])",
          betas_check()),
      key("optim.eps", &E::eps, "adam, adamw, rmsprop: epsilon", greater_than(0)),
      key("optim.alpha", &E::alpha, "rmsprop: smoothing constant", between(0, 1)),
      key("optim.lr_scaling", &E::lr_scaling,
          "when the global batch differs from the batch optim.lr is meant for: none, linear (lr x k) or sqrt "
          "(lr x sqrt(k)), k = global batch / optim.lr_batch_size (default data.batch_size)",
          one_of({"none", "linear", "sqrt"})),
      key("optim.lr_batch_size", &E::lr_batch_size,
          "the batch optim.lr is meant for, the k = 1 of lr_scaling (0: data.batch_size; needed with \"auto\")",
          at_least(0)),

      key("schedule.name", &E::schedule, "none, step, multistep or cosine",
          one_of({"none", "step", "multistep", "cosine"})),
      key("schedule.step_size", &E::step_size, "step: epochs between decays", greater_than(0)),
      key("schedule.gamma", &E::gamma, "step, multistep: decay factor", greater_than(0)),
      key("schedule.milestones", &E::milestones, "multistep: epochs at which lr is multiplied by gamma",
          all_positive()),
      key("schedule.warmup_epochs", &E::warmup_epochs, "linear warm-up from 0 over this many epochs", at_least(0)),
      key("schedule.min_lr", &E::min_lr, "cosine: final learning rate", at_least(0)),

      resumable(key("checkpoint.folder", &E::checkpoint_folder, "where checkpoints go (empty: the run folder's checkpoints/)")),
      resumable(key("checkpoint.save", &E::checkpoint_save,
          "none; last (every epoch, last.ckpt); best (best.ckpt by monitor, plus last.ckpt); every (epoch-N.ckpt every N epochs, plus last.ckpt)",
          one_of({"none", "last", "best", "every"}))),
      resumable(key("checkpoint.every_n_epochs", &E::checkpoint_every, "with save = \"every\": epochs between checkpoints", greater_than(0))),
      resumable(key("checkpoint.monitor", &E::checkpoint_monitor, "metric for save = \"best\"",
          one_of({"test_accuracy", "test_loss", "train_accuracy", "train_loss"}))),
      resumable(key("checkpoint.mode", &E::checkpoint_mode, "auto (max for accuracy, min for loss), max or min",
          one_of({"auto", "max", "min"}))),
      resumable(key("checkpoint.keep_last", &E::checkpoint_keep_last, "with save = \"every\": keep the newest K epoch files (0: all)",
          at_least(0))),

      resumable(key("early_stopping.monitor", &E::early_stopping_monitor, "metric watched for early stopping",
          one_of({"test_accuracy", "test_loss", "train_accuracy", "train_loss"}))),
      resumable(key("early_stopping.mode", &E::early_stopping_mode, "auto (max for accuracy, min for loss), max or min",
          one_of({"auto", "max", "min"}))),
      resumable(key("early_stopping.patience", &E::early_stopping_patience,
          "stop after this many evaluated epochs without improvement (0: off)", at_least(0))),
      resumable(key("early_stopping.min_delta", &E::early_stopping_min_delta, "smallest change that counts as improvement",
          at_least(0))),

      resumable(key("distributed.timeout", &E::distributed_timeout,
          "seconds the ranks wait for each other (rendezvous, each collective) before naming the missing rank and "
          "stopping",
          greater_than(0))),
      resumable(key("distributed.bucket_mb", &E::bucket_mb, "ddp: gradient bucket size in MiB (all-reduced as backward fills it)",
          greater_than(0))),

      resumable(key("train.epochs", &E::epochs, "number of epochs", greater_than(0))),
      key("train.max_steps", &E::max_steps, "stop after this many optimizer steps (0: no limit)", at_least(0)),
      resumable(key("train.log_interval", &E::log_interval, "print step loss and throughput every N steps (0: never)",
          at_least(0))),
      resumable(key("train.eval_every", &E::eval_every, "evaluate on the test set every N epochs (the last always)",
          greater_than(0))),
      key("train.grad_clip", &E::grad_clip, "clip the gradient norm to this value (0: off)", at_least(0)),
      resumable(key("train.threads", &E::threads, "LibTorch intra-op threads (0: LibTorch's default)", at_least(0))),
      resumable(key("train.on_nonfinite", &E::on_nonfinite,
                    "a loss (or gradient) that is nan or inf: stop (with the step and the last good checkpoint) or "
                    "skip_step (that batch changes nothing); fp16 always skips as its loss scaling does",
                    one_of({"stop", "skip_step"}))),
      resumable(key("train.phase_timing", &E::phase_timing,
                    "time the phases of the training steps (data, copy, fwd, bwd, opt, other) and show their "
                    "shares each epoch")),
      resumable(key("train.profile", &E::profile,
                    "record train.profile_steps steps with LibTorch's profiler (Kineto) after train.profile_warmup: a "
                    "Chrome trace in <run folder>/profile/trace.json and the top operators (also --profile)")),
      resumable(key("train.profile_steps", &E::profile_steps, "steps the profiler records (also --profile-steps)",
                    greater_than(0))),
      resumable(key("train.profile_warmup", &E::profile_warmup, "steps before the profiler starts", at_least(0))),
      resumable(boolean_or_default_key("train.tf32", &E::tf32,
                                       "NVIDIA GPUs: float32 matrix products and convolutions in TF32: true, false, or "
                                       "\"default\" (PyTorch's: convolutions yes, matrix products no)")),
      resumable(key("train.cudnn_benchmark", &E::cudnn_benchmark,
                    "NVIDIA GPUs: let cuDNN time its convolution algorithms once per shape and keep the fastest")),
      resumable(key("train.memory_format", &E::memory_format,
                    "convolutional models and their batches: channels_last, contiguous, or auto (channels_last for "
                    "a model with 2-d convolutions)",
                    one_of({"auto", "channels_last", "contiguous"}))),
      resumable(boolean_or_auto_key(
          "train.graphs",
          &E::graphs,
          "record each full training step once as a device graph and replay it: true, false, or "
          "\"auto\" (where the backend records graphs and the run allows it; the log says why not)")),
      key("train.precision", &E::precision,
          "fp32, bf16 (autocast) or fp16 (autocast with dynamic loss scaling)", one_of({"fp32", "bf16", "fp16"})),
  };
  return schema;
}

}  // namespace plugtrain
