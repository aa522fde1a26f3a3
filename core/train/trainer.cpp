#include "train/trainer.h"

#include <chrono>
#include <cstdio>
#include <ostream>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/nn/utils/clip_grad.h>

#include "data/batch_loader.h"
#include "train/optimizers.h"
#include "train/precision.h"
#include "util/format.h"

namespace plugtrain {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

data::Augmentation augmentation_of(const Experiment& e) {
  data::Augmentation a;
  for (const auto& name : e.augmentation) {
    if (name == "random_crop") a.random_crop = true;
    if (name == "horizontal_flip") a.horizontal_flip = true;
  }
  a.crop_padding = e.crop_padding;
  return a;
}

}  // namespace

Evaluation evaluate(Model& model, const data::Dataset& dataset, std::int64_t batch_size, c10::Device device,
                    const LoaderConfig& loader, const std::string& precision) {
  at::NoGradGuard no_grad;
  model.eval();
  data::BatchLoader batches(dataset, batch_size, /*shuffle=*/false, data::Augmentation{}, loader, device, 0);
  batches.start_epoch(0);
  at::Tensor loss_sum = at::zeros({}, at::TensorOptions().dtype(at::kDouble).device(device));
  at::Tensor correct = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(device));
  std::int64_t seen = 0;
  while (auto batch = batches.next()) {
    at::Tensor logits;
    {
      AutocastScope autocast(precision, device.type());
      logits = model.forward(batch->inputs);
    }
    loss_sum += at::cross_entropy_loss(logits.to(at::kFloat), batch->targets, {}, at::Reduction::Sum).to(at::kDouble);
    correct += logits.argmax(1).eq(batch->targets).sum();
    seen += batch->targets.size(0);
  }
  Evaluation e;
  if (seen > 0) {
    e.loss = loss_sum.item<double>() / double(seen);
    e.accuracy = double(correct.item<std::int64_t>()) / double(seen);
  }
  return e;
}

Trainer::Trainer(const Experiment& experiment, std::shared_ptr<Model> model, const data::DatasetPair& data,
                 c10::Device device, LoaderConfig loader, std::ostream& log, std::function<MemoryInfo()> memory)
    : experiment_(experiment),
      model_(std::move(model)),
      data_(data),
      device_(device),
      loader_(loader),
      log_(log),
      memory_(std::move(memory)) {}

TrainSummary Trainer::fit() {
  const Experiment& e = experiment_;
  Model& model = *model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer = make_optimizer(e, model.parameters());
  data::BatchLoader batches(data_.train, e.batch_size, /*shuffle=*/true, augmentation_of(e), loader_, device_,
                            static_cast<std::uint64_t>(e.seed));
  const std::int64_t steps_per_epoch = batches.batches_per_epoch();
  const std::vector<at::Tensor> parameters = model.parameters();
  LossScaler scaler(e.precision == "fp16", device_);

  TrainSummary summary;
  double train_seconds_total = 0;
  std::int64_t train_samples_total = 0;
  const auto run_start = Clock::now();
  bool stop = false;

  for (std::int64_t epoch = 1; epoch <= e.epochs && !stop; ++epoch) {
    const auto epoch_start = Clock::now();
    model.train();
    batches.start_epoch(epoch);
    // Running sums stay on the device: reading them every step would synchronise it.
    at::Tensor loss_sum = at::zeros({}, at::TensorOptions().dtype(at::kDouble).device(device_));
    at::Tensor correct = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(device_));
    std::int64_t seen = 0, step_in_epoch = 0;
    auto interval_start = Clock::now();
    std::int64_t interval_samples = 0;
    double lr = e.lr;

    while (auto batch = batches.next()) {
      lr = scheduled_lr(e, summary.steps, steps_per_epoch);
      set_lr(*optimizer, lr);
      optimizer->zero_grad();
      at::Tensor logits, loss;
      {
        AutocastScope autocast(e.precision, device_.type());
        logits = model.forward(batch->inputs);
        loss = at::cross_entropy_loss(logits, batch->targets);
      }
      scaler.scale(loss).backward();
      if (scaler.unscale(parameters)) {  // false: fp16 gradients overflowed, skip this step
        if (e.grad_clip > 0) torch::nn::utils::clip_grad_norm_(parameters, e.grad_clip);
        optimizer->step();
      }
      scaler.update();

      const std::int64_t n = batch->targets.size(0);
      {
        // As few small ops as possible: each costs a dispatch on the hot path.
        at::NoGradGuard no_grad;
        loss_sum.add_(loss.detach(), double(n));
        correct.add_(logits.detach().argmax(1).eq(batch->targets).sum());
      }
      seen += n;
      interval_samples += n;
      ++step_in_epoch;
      ++summary.steps;

      if (e.log_interval > 0 && summary.steps % e.log_interval == 0) {
        const double elapsed = seconds_since(interval_start);
        log_ << "  epoch " << epoch << " step " << step_in_epoch << "/" << steps_per_epoch << "  loss "
             << fixed(loss.item<double>(), 4) << "  lr " << lr << "  " << fixed(interval_samples / elapsed, 0)
             << " samples/s\n"
             << std::flush;
        interval_start = Clock::now();
        interval_samples = 0;
      }
      if (e.max_steps > 0 && summary.steps >= e.max_steps) {
        stop = true;
        break;
      }
    }
    EpochMetrics m;
    m.epoch = epoch;
    m.lr = lr;
    m.train_loss = seen ? loss_sum.item<double>() / double(seen) : 0;
    m.train_accuracy = seen ? double(correct.item<std::int64_t>()) / double(seen) : 0;
    const double train_seconds = seconds_since(epoch_start);
    m.samples_per_second = train_seconds > 0 ? double(seen) / train_seconds : 0;
    train_seconds_total += train_seconds;
    train_samples_total += seen;

    const bool last = stop || epoch == e.epochs;
    if (last || epoch % e.eval_every == 0) {
      Evaluation test = evaluate(model, data_.test, e.test_batch_size, device_, loader_, e.precision);
      m.test_loss = test.loss;
      m.test_accuracy = test.accuracy;
      if (test.accuracy > summary.best_test_accuracy || summary.best_epoch == 0) {
        summary.best_test_accuracy = test.accuracy;
        summary.best_epoch = epoch;
      }
      summary.final_test_accuracy = test.accuracy;
      summary.final_test_loss = test.loss;
    }
    m.seconds = seconds_since(epoch_start);
    if (memory_) m.memory = memory_();
    log_ << "epoch " << epoch << "/" << e.epochs << "  train loss " << fixed(m.train_loss, 4) << " acc "
         << fixed(m.train_accuracy, 4);
    if (m.test_accuracy)
      log_ << " | test loss " << fixed(*m.test_loss, 4) << " acc " << fixed(*m.test_accuracy, 4);
    log_ << " | " << fixed(m.samples_per_second, 0) << " samples/s | " << fixed(m.seconds, 1) << " s";
    if (m.memory.process_used_bytes)
      log_ << " | mem " << format_bytes(m.memory.process_used_bytes) << " (peak "
           << format_bytes(m.memory.process_peak_bytes) << ")";
    log_ << "\n" << std::flush;
    summary.epochs.push_back(m);
  }
  summary.skipped_steps = scaler.skipped_steps();
  summary.total_seconds = seconds_since(run_start);
  summary.samples_per_second = train_seconds_total > 0 ? double(train_samples_total) / train_seconds_total : 0;
  return summary;
}

}  // namespace plugtrain
