#include "train/trainer.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <ostream>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/nn/utils/clip_grad.h>

#include "data/batch_loader.h"
#include "distributed/collectives.h"
#include "distributed/data_parallel.h"
#include "distributed/gradient_sync.h"
#include "logging/progress_bar.h"
#include "logging/tensorboard_writer.h"
#include "state/checkpoint.h"
#include "train/optimizers.h"
#include "train/precision.h"
#include "util/format.h"
#include "util/interrupt.h"

namespace plugtrain {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

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

// Loss sums in float64 where the device has it (MPS has no float64).
at::ScalarType sum_dtype(c10::Device device) { return device.is_mps() ? at::kFloat : at::kDouble; }

std::optional<double> metric(const EpochMetrics& m, const std::string& name) {
  if (name == "train_loss") return m.train_loss;
  if (name == "train_accuracy") return m.train_accuracy;
  if (name == "test_loss") return m.test_loss;
  return m.test_accuracy;
}

bool maximise(const std::string& metric_name, const std::string& mode) {
  if (mode == "max") return true;
  if (mode == "min") return false;
  return metric_name.find("accuracy") != std::string::npos;
}

// True when `value` beats `best` by more than min_delta in the metric's direction.
bool improves(double value, double best, bool has_best, bool max, double min_delta) {
  if (!has_best) return true;
  return max ? value > best + min_delta : value < best - min_delta;
}

data::Shard shard_of(const Collectives* c, bool pad) {
  return c ? data::Shard{c->rank(), c->size(), pad} : data::Shard{};
}

// Sums over all ranks of a few per-rank figures (one round trip; on the CPU, where Gloo is fastest).
std::vector<double> summed(Collectives* c, std::vector<double> values) {
  if (!c) return values;
  std::vector<at::Tensor> t{at::tensor(values, at::TensorOptions().dtype(at::kDouble))};
  c->all_reduce_sum(t);
  const double* p = t[0].data_ptr<double>();
  return std::vector<double>(p, p + values.size());
}

// The ranks must stop at the same step, so they agree on a SIGINT/SIGTERM that some of them
// got. Each question is a collective: during an epoch it is asked every 8th step (of the run,
// so short epochs are covered too), and always at an epoch's end.
bool interrupt_agreed(Collectives* c) {
  if (!c) return interrupt_requested();
  return summed(c, {interrupt_requested() ? 1.0 : 0.0})[0] > 0;
}
bool interrupt_question_due(const Collectives* c, std::int64_t step) { return !c || step % 8 == 0; }

// One CSV row per logged step and per epoch; appended, so a resumed run continues the file.
class MetricsCsv {
 public:
  explicit MetricsCsv(const std::filesystem::path& path) {
    if (path.empty()) return;
    const bool fresh = !std::filesystem::exists(path);
    out_.open(path, std::ios::app);
    if (fresh) out_ << "kind,epoch,step,loss,accuracy,test_loss,test_accuracy,lr,samples_per_second,seconds\n";
  }
  void step(std::int64_t epoch, std::int64_t step, double loss, double lr, double sps) {
    if (out_) out_ << "step," << epoch << "," << step << "," << loss << ",,,," << lr << "," << sps << ",\n" << std::flush;
  }
  void epoch(const EpochMetrics& m, std::int64_t step) {
    if (!out_) return;
    out_ << "epoch," << m.epoch << "," << step << "," << m.train_loss << "," << m.train_accuracy << ",";
    if (m.test_loss) out_ << *m.test_loss;
    out_ << ",";
    if (m.test_accuracy) out_ << *m.test_accuracy;
    out_ << "," << m.lr << "," << m.samples_per_second << "," << m.seconds << "\n" << std::flush;
  }

 private:
  std::ofstream out_;
};

}  // namespace

Evaluation evaluate(Model& model, const data::Dataset& dataset, std::int64_t batch_size, c10::Device device,
                    const LoaderConfig& loader, const std::string& precision, Collectives* collectives,
                    DataParallel* replicas) {
  at::NoGradGuard no_grad;
  model.eval();
  data::BatchLoader batches(dataset, batch_size, /*shuffle=*/false, data::Augmentation{}, loader, device, 0,
                            shard_of(collectives, /*pad=*/false));
  batches.start_epoch(0);
  at::Tensor loss_sum = at::zeros({}, at::TensorOptions().dtype(sum_dtype(device)).device(device));
  at::Tensor correct = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(device));
  std::int64_t seen = 0;
  while (auto batch = batches.next()) {
    at::Tensor logits;
    {
      AutocastScope autocast(precision, device.type());
      logits = replicas ? replicas->forward(batch->inputs) : model.forward(batch->inputs);
    }
    loss_sum += at::cross_entropy_loss(logits.to(at::kFloat), batch->targets, {}, at::Reduction::Sum);
    correct += logits.argmax(1).eq(batch->targets).sum();
    seen += batch->targets.size(0);
  }
  const std::vector<double> total =
      summed(collectives, {loss_sum.item<double>(), double(correct.item<std::int64_t>()), double(seen)});
  Evaluation e;
  if (total[2] > 0) {
    e.loss = total[0] / total[2];
    e.accuracy = total[1] / total[2];
  }
  return e;
}

Trainer::Trainer(const Experiment& experiment, std::shared_ptr<Model> model, const data::DatasetPair& data,
                 c10::Device device, LoaderConfig loader, std::ostream& log, std::function<MemoryInfo()> memory,
                 RunFiles files, Collectives* collectives, DataParallel* replicas)
    : experiment_(experiment),
      model_(std::move(model)),
      data_(data),
      device_(device),
      loader_(loader),
      log_(log),
      memory_(std::move(memory)),
      files_(std::move(files)),
      collectives_(collectives),
      replicas_(replicas) {}

TrainSummary Trainer::fit() {
  const Experiment& e = experiment_;
  Model& model = *model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer = make_optimizer(e, model.parameters());
  Collectives* dist = collectives_;
  const int world = dist ? dist->size() : 1;
  data::BatchLoader batches(data_.train, e.batch_size, /*shuffle=*/true, augmentation_of(e), loader_, device_,
                            static_cast<std::uint64_t>(e.seed), shard_of(dist, /*pad=*/true));
  const std::int64_t steps_per_epoch = batches.batches_per_epoch();
  const std::vector<at::Tensor> parameters = model.parameters();
  LossScaler scaler(e.precision == "fp16", device_);
  MetricsCsv csv(files_.metrics_csv);
  std::unique_ptr<ProgressBar> bar;
  if (files_.progress) bar = std::make_unique<ProgressBar>(*files_.progress, /*color=*/true);
  std::unique_ptr<TensorBoardWriter> board;
  if (!files_.tensorboard.empty()) board = std::make_unique<TensorBoardWriter>(files_.tensorboard);

  TrainingProgress progress;
  if (!files_.resume_from.empty()) {
    progress = load_checkpoint(files_.resume_from, model, *optimizer, device_).progress;
    if (progress.finished)
      throw CheckpointError(files_.resume_from.string() + ": that run ended by early stopping or max_steps after epoch " +
                            std::to_string(progress.epochs_done) + "; there is nothing to resume");
    if (progress.epochs_done >= e.epochs && progress.step_in_epoch == 0)
      throw CheckpointError(files_.resume_from.string() + ": that run already trained all " +
                            std::to_string(progress.epochs_done) + " epochs; raise train.epochs to train further");
    log_ << "resumed from " << files_.resume_from.string() << ": " << progress.epochs_done << " epochs and "
         << progress.step << " steps done"
         << (progress.step_in_epoch ? " (" + std::to_string(progress.step_in_epoch) + " steps into the next epoch)" : "")
         << "\n";
  }
  if (progress.loss_scale > 0)
    scaler.restore(progress.loss_scale, progress.loss_scale_growth_tracker, progress.skipped_steps);
  // ddp: rank 0's weights everywhere, then gradients averaged in buckets during backward.
  std::unique_ptr<GradientSync> sync;
  if (dist) sync = std::make_unique<GradientSync>(*dist, parameters, model.buffers(), e.bucket_mb * 1024 * 1024);
  // The partial sums of an interrupted epoch are totals over all ranks: one rank carries them.
  const bool carries_partial = !dist || dist->rank() == 0;
  auto save = [&](const std::filesystem::path& path) {
    if (scaler.enabled()) {
      progress.loss_scale = scaler.current_scale();
      progress.loss_scale_growth_tracker = scaler.growth_tracker();
      progress.skipped_steps = scaler.skipped_steps();
    }
    save_checkpoint(path, model, *optimizer, {progress, files_.experiment_json, e.model, "", ""}, device_);
  };
  const bool checkpoint_max = maximise(e.checkpoint_monitor, e.checkpoint_mode);
  const bool stopping_max = maximise(e.early_stopping_monitor, e.early_stopping_mode);

  TrainSummary summary;
  summary.steps = progress.step;
  summary.best_test_accuracy = progress.best_test_accuracy;
  summary.best_epoch = progress.best_test_epoch;
  double train_seconds_total = 0;
  std::int64_t train_samples_total = 0;
  const auto run_start = Clock::now();
  bool stop = false;

  for (std::int64_t epoch = progress.epochs_done + 1; epoch <= e.epochs && !stop; ++epoch) {
    const auto epoch_start = Clock::now();
    model.train();
    batches.start_epoch(epoch);
    // Running sums stay on the device: reading them every step would synchronise it.
    at::Tensor loss_sum = at::full({}, carries_partial ? progress.partial_loss_sum : 0.0,
                                   at::TensorOptions().dtype(sum_dtype(device_)).device(device_));
    at::Tensor correct = at::full({}, carries_partial ? progress.partial_correct : 0,
                                  at::TensorOptions().dtype(at::kLong).device(device_));
    std::int64_t seen = carries_partial ? progress.partial_seen : 0, step_in_epoch = 0;
    // This epoch's totals over all ranks (loss sum, correct, seen), taken when it ends or stops.
    auto epoch_totals = [&] {
      return summed(dist, {loss_sum.item<double>(), double(correct.item<std::int64_t>()), double(seen)});
    };
    // Resuming mid-epoch: the epoch's batches are a function of (seed, epoch), so replaying
    // the ones already trained on (without training) puts every generator where it was.
    for (; step_in_epoch < progress.step_in_epoch && batches.next(); ++step_in_epoch) {
    }
    progress.step_in_epoch = 0;
    if (bar) bar->start(epoch, e.epochs, steps_per_epoch);
    auto interval_start = Clock::now();
    std::int64_t interval_samples = 0;
    double lr = e.lr;

    while (auto batch = batches.next()) {
      lr = scheduled_lr(e, summary.steps, steps_per_epoch);
      set_lr(*optimizer, lr);
      optimizer->zero_grad();
      at::Tensor logits, loss;
      if (sync) sync->before_forward();
      {
        AutocastScope autocast(e.precision, device_.type());
        logits = replicas_ ? replicas_->forward(batch->inputs) : model.forward(batch->inputs);
        loss = at::cross_entropy_loss(logits, batch->targets);
      }
      if (sync) sync->before_backward();
      scaler.scale(loss).backward();
      if (replicas_) replicas_->gather_gradients();
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
      interval_samples += n * world;
      ++step_in_epoch;
      ++summary.steps;
      if (dist) dist->note_step(summary.steps);

      if (bar && bar->due(step_in_epoch))
        bar->update(step_in_epoch, loss.item<double>(), (seen - (carries_partial ? progress.partial_seen : 0)) * world);
      if (e.log_interval > 0 && summary.steps % e.log_interval == 0) {
        const double elapsed = seconds_since(interval_start);
        const double step_loss = loss.item<double>();
        if (bar) bar->clear();
        log_ << "  epoch " << epoch << " step " << step_in_epoch << "/" << steps_per_epoch << "  loss "
             << fixed(step_loss, 4) << "  lr " << lr << "  " << fixed(interval_samples / elapsed, 0) << " samples/s\n"
             << std::flush;
        csv.step(epoch, summary.steps, step_loss, lr, interval_samples / elapsed);
        if (board) {
          board->add_scalar("train/loss_step", step_loss, summary.steps);
          board->add_scalar("train/lr", lr, summary.steps);
          board->add_scalar("train/samples_per_second", interval_samples / elapsed, summary.steps);
          board->flush();
        }
        interval_start = Clock::now();
        interval_samples = 0;
      }
      if (step_in_epoch < steps_per_epoch && interrupt_question_due(dist, summary.steps) && interrupt_agreed(dist)) {
        // Finish this step, save where we are inside the epoch, and stop.
        const std::vector<double> totals = epoch_totals();
        progress.step = summary.steps;
        progress.step_in_epoch = step_in_epoch;
        progress.partial_loss_sum = totals[0];
        progress.partial_correct = static_cast<std::int64_t>(totals[1]);
        progress.partial_seen = static_cast<std::int64_t>(totals[2]);
        summary.interrupted = true;
        summary.stop_reason = std::string(interrupt_signal_name()) + " received";
        if (!files_.checkpoints.empty()) save(files_.checkpoints / "last.ckpt");
        break;
      }
      if (e.max_steps > 0 && summary.steps >= e.max_steps) {
        stop = true;
        break;
      }
    }
    if (bar) bar->clear();
    if (summary.interrupted) break;

    EpochMetrics m;
    m.epoch = epoch;
    m.lr = lr;
    const std::vector<double> totals = epoch_totals();
    seen = static_cast<std::int64_t>(totals[2]);
    m.train_loss = seen ? totals[0] / double(seen) : 0;
    m.train_accuracy = seen ? totals[1] / double(seen) : 0;
    const double train_seconds = seconds_since(epoch_start);
    m.samples_per_second = train_seconds > 0 ? double(seen - progress.partial_seen) / train_seconds : 0;
    train_seconds_total += train_seconds;
    train_samples_total += seen - progress.partial_seen;
    progress.partial_loss_sum = 0;
    progress.partial_correct = 0;
    progress.partial_seen = 0;

    const bool last = stop || epoch == e.epochs;
    if (last || epoch % e.eval_every == 0) {
      if (sync) sync->share_buffers();  // every rank evaluates rank 0's model (batch-norm statistics)
      Evaluation test = evaluate(model, data_.test, e.test_batch_size, device_, loader_, e.precision, dist, replicas_);
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
    if (m.test_accuracy) log_ << " | test loss " << fixed(*m.test_loss, 4) << " acc " << fixed(*m.test_accuracy, 4);
    log_ << " | " << fixed(m.samples_per_second, 0) << " samples/s | " << fixed(m.seconds, 1) << " s";
    if (m.memory.process_used_bytes)
      log_ << " | mem " << format_bytes(m.memory.process_used_bytes) << " (peak "
           << format_bytes(m.memory.process_peak_bytes) << ")";
    log_ << "\n" << std::flush;
    csv.epoch(m, summary.steps);
    if (board) {
      board->add_scalar("epoch/train_loss", m.train_loss, epoch);
      board->add_scalar("epoch/train_accuracy", m.train_accuracy, epoch);
      if (m.test_loss) board->add_scalar("epoch/test_loss", *m.test_loss, epoch);
      if (m.test_accuracy) board->add_scalar("epoch/test_accuracy", *m.test_accuracy, epoch);
      board->add_scalar("epoch/lr", m.lr, epoch);
      board->add_scalar("epoch/samples_per_second", m.samples_per_second, epoch);
      if (m.memory.process_used_bytes) board->add_scalar("epoch/memory_used_bytes", double(*m.memory.process_used_bytes), epoch);
      if (m.memory.process_peak_bytes) board->add_scalar("epoch/memory_peak_bytes", double(*m.memory.process_peak_bytes), epoch);
      board->flush();
    }
    summary.epochs.push_back(m);

    // Progress as a checkpoint sees it: this epoch is done.
    progress.epochs_done = epoch;
    progress.step = summary.steps;
    progress.best_test_accuracy = summary.best_test_accuracy;
    progress.best_test_epoch = summary.best_epoch;

    // Best checkpoint and early stopping, each on its monitored metric (skipped in epochs
    // that have no such value, e.g. a test metric in an epoch without evaluation).
    bool new_best = false;
    if (std::optional<double> v = metric(m, e.checkpoint_monitor);
        v && improves(*v, progress.best_value, progress.best_epoch > 0, checkpoint_max, 0.0)) {
      progress.best_value = *v;
      progress.best_epoch = epoch;
      new_best = true;
    }
    if (e.early_stopping_patience > 0) {
      if (std::optional<double> v = metric(m, e.early_stopping_monitor)) {
        // Tracked apart from the checkpoint's best: the monitors and min_delta may differ.
        if (improves(*v, progress.stopping_best, progress.stopping_has_best, stopping_max, e.early_stopping_min_delta)) {
          progress.stopping_best = *v;
          progress.stopping_has_best = true;
          progress.epochs_without_improvement = 0;
        } else if (++progress.epochs_without_improvement >= e.early_stopping_patience) {
          summary.stopped_early = true;
          summary.stop_reason = "early stopping: " + e.early_stopping_monitor + " did not improve for " +
                                std::to_string(e.early_stopping_patience) + " evaluated epochs";
          stop = true;
        }
      }
    }
    if (!files_.checkpoints.empty() && e.checkpoint_save != "none") {
      if (e.checkpoint_save == "best" && new_best) save(files_.checkpoints / "best.ckpt");
      if (e.checkpoint_save == "every" && (epoch % e.checkpoint_every == 0 || stop || epoch == e.epochs)) {
        char name[32];
        std::snprintf(name, sizeof name, "epoch-%04lld.ckpt", static_cast<long long>(epoch));
        save(files_.checkpoints / name);
        if (e.checkpoint_keep_last > 0) {
          std::vector<std::filesystem::path> old;
          for (const auto& f : std::filesystem::directory_iterator(files_.checkpoints))
            if (f.path().filename().string().rfind("epoch-", 0) == 0 && f.path().extension() == ".ckpt")
              old.push_back(f.path());
          std::sort(old.begin(), old.end());
          for (std::size_t i = 0; i + e.checkpoint_keep_last < old.size(); ++i) std::filesystem::remove(old[i]);
        }
      }
      save(files_.checkpoints / "last.ckpt");  // always: what --resume last continues from
    }
    // A SIGINT/SIGTERM during the epoch's last step (or during evaluation): the epoch's
    // checkpoint is the place to resume from.
    if (!stop && epoch < e.epochs && interrupt_agreed(dist)) {
      summary.interrupted = true;
      summary.stop_reason = std::string(interrupt_signal_name()) + " received";
      break;
    }
  }
  if (stop && !summary.interrupted && !files_.checkpoints.empty() && e.checkpoint_save != "none") {
    progress.finished = true;  // early stopping or max_steps: --resume says so instead of training on
    save(files_.checkpoints / "last.ckpt");
  }
  summary.skipped_steps = scaler.skipped_steps();
  summary.total_seconds = seconds_since(run_start);
  summary.samples_per_second = train_seconds_total > 0 ? double(train_samples_total) / train_seconds_total : 0;
  return summary;
}

}  // namespace plugtrain
