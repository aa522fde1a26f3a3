// The fit loop (Lightning's fit): epochs of the epoch loop and an evaluation, callbacks at
// each stage, and one done() that names every reason to stop. Everything it works with comes
// in built (run/build.h): model, optimizer, strategy, precision, callbacks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "data/dataset.h"
#include "plugtrain/model.h"
#include "strategy/training_strategy.h"
#include "task/task.h"
#include "train/best_so_far.h"
#include "train/callback.h"
#include "train/device_context.h"
#include "train/loop_config.h"
#include "train/precision.h"
#include "util/clock.h"

namespace torch::optim {
class Optimizer;
}

namespace plugtrain {

struct EpochTotals;
struct Evaluation;
class BatchMixer;
class ModelEma;
class StochasticWeightAverage;
class TrainStep;
class EpochLoop;
class StepTimer;

// Where a resumed run took up: its checkpoint and how far that run had come.
struct ResumePoint {
  std::filesystem::path checkpoint;  // empty: a fresh start
  std::int64_t epochs_done = 0;
  std::int64_t steps_done = 0;
  std::int64_t steps_into_epoch = 0;  // an interrupted epoch's steps already trained
};

struct TrainSummary {
  ResumePoint resumed;
  std::vector<EpochMetrics> epochs;  // this fit's epochs (a resumed run starts later)
  std::string earlier_epochs_json;   // a resumed run's epochs before the resume (JSON array, from its checkpoint)
  bool interrupted = false;          // stopped by SIGINT/SIGTERM (or paused) after writing last.ckpt
  bool paused = false;               // stopped where --stop-after-epoch asked (exit 0, resumable)
  // --resume auto found a run that had already ended: this fit trained nothing.
  bool already_ended = false;
  bool stopped_early = false;        // early stopping
  std::string stop_reason;
  std::int64_t steps = 0;
  std::int64_t skipped_steps = 0;  // fp16 steps skipped because gradients overflowed
  std::vector<BatchHalving> halvings;  // out-of-memory errors that halved the batch
  std::int64_t nonfinite_skipped_steps = 0;  // train.on_nonfinite = "skip_step"
  std::int64_t step_batch = 0;         // samples per step at the end (this process's)
  std::int64_t graph_replays = 0;      // steps replayed from a recorded graph (train.graphs)
  std::string graph_fallback;          // why recorded steps stopped being used ("": they were not, or all went well)
  TaskMetric headline;                 // the task's headline metric ("accuracy")
  // The split that selects: "val" with a validation split (data.val_fraction, or the data set's
  // own), else "test".
  std::string selection_split = "test";
  bool test_is_val = false;  // the test figures are on the split that chose (no test labels)
  double best_selected = 0;             // the headline's best value on that split (by its direction)
  std::int64_t best_epoch = 0;
  double final_val_loss = 0;            // the last validation (with a validation split)
  std::vector<MetricValue> final_val;
  bool ema_evaluated = false;           // the evaluations used the EMA weights
  std::int64_t swa_epochs = 0;          // epochs in the SWA average, which the run ended with (0: none)
  double final_test_loss = 0;
  std::vector<MetricValue> final_test;  // the last test evaluation's metrics, headline first
  std::vector<MetricValue> final_per_class;  // and its figures per class
  std::int64_t tested_epoch = 0;        // the epoch after which the test set was last evaluated
  double final_headline() const { return final_test.empty() ? 0 : final_test.front().value; }
  double total_seconds = 0;
  double samples_per_second = 0;  // all training samples over all training time
  std::string strategy;           // single, dp, ddp or fsdp
  std::int64_t state_bytes = 0;   // this process's parameters, gradients and optimizer state at the end
  std::optional<ShardingFigures> sharding;  // fsdp's units and the most gathered at once
};

struct TrainerParts {
  LoopConfig loop;                         // what the loop needs of the experiment
  std::int64_t batch_size = 0;             // samples per step for this process's loader (the plan's)
  double lr = 0;                           // base learning rate (the plan's, scaled for the global batch)
  std::shared_ptr<Model> model;
  std::shared_ptr<Task> task;              // loss and metrics (null: classification with its defaults)
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<Precision> precision;
  std::unique_ptr<TrainingStrategy> strategy;
  const data::DatasetPair* data = nullptr;
  DeviceContext device;
  std::vector<std::unique_ptr<Callback>> callbacks;
  std::filesystem::path resume_from;  // empty: a fresh start
  // --resume auto: a checkpoint that already trained every epoch ends the run at once (a
  // restart after the last checkpoint), instead of being an error.
  bool finished_checkpoint_is_done = false;
  std::string experiment_record;      // the resolved experiment, stored in checkpoints
  // Set when the steps are replayed from recorded device graphs (train.graphs; run/build.cpp
  // decides): each training step object gets its own recorder from it.
  std::function<std::unique_ptr<GraphCapture>()> make_graph_capture;
  bool graph_fallback = true;  // train.graphs "auto": a recording the device refuses goes on eagerly

  TrainerParts();
  TrainerParts(TrainerParts&&) noexcept;
  ~TrainerParts();
};

// The parts of a single-device run as the experiment describes it (its batch and lr, its
// optimizer and precision), without callbacks: for tests, benchmarks and `bench`-like commands.
// The task is classification with its defaults unless the caller sets parts.task.
TrainerParts single_device_parts(const Experiment& experiment, std::shared_ptr<Model> model,
                                 const data::DatasetPair& data, DeviceContext device);

class Trainer {
 public:
  explicit Trainer(TrainerParts parts);
  ~Trainer();
  TrainSummary fit();

  // `steps` training steps of the built run and nothing else (no evaluation, no callbacks, no
  // checkpoint), each ended by a device synchronisation; their wall times, in seconds. For
  // commands that time a run (bench, fastest-backend selection) and the automatic batch size,
  // which gives its own `batch_size` (0: the built one). `synchronise_each = false`: one
  // synchronisation after the last step, and every step's time is the mean (throughput as a
  // run sees it, with the device's queue never drained between steps).
  std::vector<double> time_steps(std::int64_t steps, std::int64_t batch_size = 0, bool synchronise_each = true);
  // The same steps from a StepTimer that keeps its loader and step between calls (a benchmark
  // that times a step per round keeps one per run); time_steps makes a new one each call.
  std::unique_ptr<StepTimer> step_timer(std::int64_t batch_size = 0);

  const LoopState& state() const { return state_; }
  TrainingStrategy& strategy() { return *parts_.strategy; }
  const DeviceContext& device() const { return parts_.device; }

 private:
  std::unique_ptr<data::BatchLoader> make_loader(std::int64_t batch_size) const;
  // The eager step, or the recorded one when parts_.make_graph_capture is set.
  std::unique_ptr<TrainStep> make_step(bool skip_nonfinite);
  std::string step_fallback_;  // why make_step gave eager steps where the plan recorded them
  // Every part whose state a checkpoint keeps, each in its own section: the loop's counters,
  // the sampler's position and the interrupted epoch's sums, the history, the precision, and
  // each callback that is Stateful.
  std::vector<Stateful*> stateful_parts();
  void restore();
  bool done();
  // One epoch and its figures to the callbacks; false when it was interrupted mid-way.
  bool train_epoch(EpochLoop& epoch_loop);
  void test_after_the_end();
  void summarize_the_end(const TrainStep& step, Clock::time_point run_start);
  EpochMetrics finish_epoch(const EpochTotals& totals);
  // The model (with the EMA weights when the run evaluates with them) on the validation split
  // (val) or the test set.
  Evaluation evaluate_split(bool val);
  // The test set after epoch state_.epoch, into the summary (and row); record_test takes
  // figures already evaluated on it.
  void test_now(EpochMetrics* row);
  void record_test(const Evaluation& test, EpochMetrics* row);
  // SWA: the batch-norm statistics of the weights in the model recomputed over the training set.
  void recompute_swa_batch_norm();
  void save_checkpoint(const std::filesystem::path& path);

  TrainerParts parts_;
  LoopState state_;
  BestSoFar best_selected_;           // the summary's best headline metric on the selection split
  std::unique_ptr<ModelEma> ema_;     // train.ema_decay > 0
  std::unique_ptr<BatchMixer> mixer_; // mixup or CutMix
  std::unique_ptr<StochasticWeightAverage> swa_;  // train.swa_start > 0
  bool swa_applied_ = false;          // the run ended: the model holds the SWA average
  TrainSummary summary_;
  StateFunctions history_;            // the epochs so far and the best headline test metric, as a section
  std::int64_t first_epoch_ = 1;      // of this fit (a resumed run starts later)
  double train_seconds_ = 0;          // over this fit's epochs
  std::int64_t train_samples_ = 0;
};

}  // namespace plugtrain
