#include "train/loop_config.h"

namespace plugtrain {

LoopConfig loop_config(const Experiment& e) {
  LoopConfig c;
  c.epochs = e.train.epochs;
  c.max_steps = e.train.max_steps;
  c.steps_per_epoch = e.train.steps_per_epoch;
  c.shuffle = e.data.shuffle;
  c.log_interval = e.train.log_interval;
  c.eval_every = e.train.eval_every;
  c.test_every = e.train.test_every;
  c.accumulate_steps = e.train.accumulate_steps;
  c.ema_decay = e.train.ema_decay;
  c.ema_warmup = e.train.ema_warmup;
  c.ema_evaluate = e.train.ema_evaluate;
  c.swa_start = e.train.swa_start;
  c.swa_lr = e.train.swa_lr;
  c.mixup_alpha = e.data.mixup_alpha;
  c.cutmix_alpha = e.data.cutmix_alpha;
  c.mixup_prob = e.data.mixup_prob;
  c.mixup_switch_prob = e.data.mixup_switch_prob;
  c.test_batch_size = e.data.test_batch_size;
  c.min_batch_size = e.data.min_batch_size;
  c.seed = static_cast<std::uint64_t>(e.experiment.seed);
  c.phase_timing = e.train.phase_timing;
  c.precision = e.train.precision;
  c.on_nonfinite = e.train.on_nonfinite;
  c.grad_clip = e.train.grad_clip;
  c.lr_scaling = e.optim.lr_scaling;
  c.schedule = e.schedule;
  c.augment = e.data.augment;
  c.model_name = e.model.name;
  return c;
}

}  // namespace plugtrain
