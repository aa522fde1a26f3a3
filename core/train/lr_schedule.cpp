#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace plugtrain {

namespace {

// PyTorch's OneCycleLR (anneal_strategy "cos", two phases): from lr / div_factor up to lr over
// the first pct_start of the steps, then down to that / final_div_factor.
double one_cycle_lr(const ScheduleConfig& s, double max_lr, double step, std::int64_t total) {
  const double initial = max_lr / s.div_factor, last = initial / s.final_div_factor;
  const double rise_end = s.pct_start * double(total) - 1, fall_end = double(total) - 1;
  auto anneal = [](double from, double to, double pct) { return to + (from - to) / 2 * (std::cos(M_PI * pct) + 1); };
  if (step <= rise_end) return anneal(initial, max_lr, rise_end > 0 ? step / rise_end : 1.0);
  return anneal(max_lr, last, std::min(1.0, (step - rise_end) / std::max(1e-12, fall_end - rise_end)));
}

}  // namespace

double scheduled_lr(const LoopConfig& c, double base_lr, double step, std::int64_t steps_per_epoch) {
  const ScheduleConfig& s = c.schedule;
  // SWA holds the learning rate at swa_lr from its first epoch on.
  if (c.swa_start > 0 && c.swa_lr > 0 &&
      std::int64_t(step) / std::max<std::int64_t>(1, steps_per_epoch) + 1 >= c.swa_start)
    return c.swa_lr;
  std::int64_t total = c.epochs * steps_per_epoch;
  if (c.max_steps > 0) total = std::min(total, c.max_steps);
  if (s.name == ScheduleName::onecycle) return one_cycle_lr(s, base_lr, step, std::max<std::int64_t>(1, total));
  const std::int64_t warmup_steps = s.warmup_steps > 0 ? s.warmup_steps : s.warmup_epochs * steps_per_epoch;
  if (step < double(warmup_steps)) return base_lr * (step + 1) / double(warmup_steps);
  const std::int64_t epoch = std::int64_t(step) / std::max<std::int64_t>(1, steps_per_epoch);
  if (s.name == ScheduleName::step) return base_lr * std::pow(s.gamma, double(epoch / s.step_size));
  if (s.name == ScheduleName::multistep) {
    int passed = 0;
    for (auto m : s.milestones) passed += epoch >= m;
    return base_lr * std::pow(s.gamma, passed);
  }
  if (s.name == ScheduleName::cosine || s.name == ScheduleName::linear) {
    const double span = double(std::max<std::int64_t>(1, total - warmup_steps));
    const double t = std::min(1.0, (step - double(warmup_steps)) / span);
    const double shape = s.name == ScheduleName::cosine ? 0.5 * (1 + std::cos(M_PI * t)) : 1 - t;
    return s.min_lr + (base_lr - s.min_lr) * shape;
  }
  return base_lr;
}

}  // namespace plugtrain
