// What the training loop knows at any moment, shared with its callbacks: where the run stands
// (epoch, step, the sampler's position), why it is stopping, and how to write a checkpoint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/choices.h"
#include "plugtrain/backend.h"
#include "task/task.h"
#include "train/phase_timer.h"
#include "checkpoint/state_section.h"

namespace plugtrain {

// The host's waits for the device in one epoch (a backend whose RuntimeCounts have host_syncs
// counts them, plugtrain/backend.h): a value read, a copy to the host, a blocking
// copy to it, an explicit synchronisation. A steady step is one after the epoch's first two
// (warm-up) that neither logged (a logged step reads the loss, and phase timing samples it) nor
// wrote a checkpoint: it should wait for nothing.
struct HostSyncFigures {
  bool counted = false;             // false: the backend cannot count
  std::int64_t steady_steps = 0;
  std::uint64_t steady = 0;         // waits in steady steps
  std::uint64_t epoch = 0;          // all waits of the training epoch: steady ones, warm-up, logs, its end
  std::uint64_t evaluation = 0;     // the epoch's evaluation and end-of-epoch work
  std::map<std::string, std::uint64_t> steady_causes;  // what the steady waits were, by cause
  double per_step() const { return steady_steps > 0 ? double(steady) / double(steady_steps) : 0.0; }
};

struct EpochMetrics {
  std::int64_t epoch = 0;  // 1-based
  double train_loss = 0;
  std::vector<MetricValue> train;  // the task's training metrics (TaskPass::training), headline first
  std::optional<double> test_loss;
  std::vector<MetricValue> test;   // the task's evaluation metrics; empty in an epoch without one
  std::optional<double> val_loss;  // the same on the validation split (data.val_fraction's or the data set's)
  std::vector<MetricValue> val;
  double samples_per_second = 0;  // training samples over training time
  std::int64_t samples = 0;       // training samples of the epoch, all processes (a resumed epoch's too)
  double seconds = 0;             // the whole epoch, evaluation included
  double lr = 0;                  // at the end of the epoch
  MemoryInfo memory;              // the backend's memory figures at the end of the epoch
  PhaseTimes phases;              // where the training steps' time went
  HostSyncFigures host_syncs;     // the host's waits for the device

  // "train_loss", "val_loss", "test_loss", or train_/val_/test_<metric> ("val_accuracy");
  // nullopt in an epoch without it.
  std::optional<double> metric(const std::string& name) const;
};

// Every reason a fit ends; the fit loop's done() decides them in one place.
enum class StopReason {
  none,            // still training
  epochs_done,     // train.epochs reached
  max_steps,       // train.max_steps reached
  early_stopping,  // the monitored metric stopped improving
  interrupted,     // SIGINT/SIGTERM: stopped after the current step with a checkpoint
  paused           // --stop-after-epoch reached: stopped after that epoch's checkpoint, resumable
};

// Figures of one logged step (every train.log_interval steps), read back from the device once.
struct StepFigures {
  double loss = 0;
  double lr = 0;
  double samples_per_second = 0;  // since the previous logged step, over all processes
};

// An out-of-memory error during a step: the batch each step trains on was halved and the
// failed samples trained again in smaller steps (train/epoch_loop.cpp).
struct BatchHalving {
  std::int64_t epoch = 0, step = 0;  // the step that failed (the run's, 1-based)
  std::int64_t from = 0, to = 0;     // samples per step before and after
  double lr_before = 0, lr_after = 0;
  std::string error;                 // LibTorch's message, first line
};

// Where the sampler stands inside an epoch a run stopped in the middle of (an interrupt): the
// loader's batches of epoch epochs_done + 1 already trained, as a checkpoint records it (0
// between epochs). A resume replays that many batches untrained: the order is a function of
// (seed, epoch), so this puts every generator where it was.
struct SamplerPosition : Stateful {
  std::int64_t batches_done = 0;
  const char* state_name() const override { return "sampler"; }
  void save_state(StateSection& out) const override { out.put_int("batches_done", batches_done); }
  void load_state(const StateSection& in) override { batches_done = in.int_at("batches_done"); }
};

// The running sums of that interrupted epoch, over all processes, so its figures cover it all.
struct EpochSums : Stateful {
  double loss_sum = 0;
  std::int64_t seen = 0;
  std::vector<double> statistics;  // the task's training statistics (task/task.h), summed
  const char* state_name() const override { return "epoch_sums"; }
  void save_state(StateSection& out) const override;
  void load_state(const StateSection& in) override;
};

// The loop's counters are its own checkpoint section, "loop"; SamplerPosition and EpochSums
// are two more. Callbacks and the precision keep theirs (train/trainer.cpp lists the parts).
struct LoopState : Stateful {
  std::int64_t epochs = 0;           // planned (train.epochs)
  std::int64_t epoch = 0;            // the current one, 1-based
  std::int64_t epochs_done = 0;      // completed (epoch - 1 while one is under way)
  std::int64_t step = 0;             // optimizer steps of the whole run so far
  std::int64_t step_in_epoch = 0;    // the loader's batches of the current epoch so far
  std::int64_t steps_per_epoch = 0;  // the loader's batches per epoch
  // Steps at the planned batch so far, the unit of the schedule and train.max_steps: equal to
  // `step` until an out-of-memory halving splits each of the loader's batches into more steps.
  std::int64_t planned_step = 0;
  std::int64_t step_batch = 0;       // samples per step after a halving (0: the loader's batch)
  std::vector<BatchHalving> halvings;  // this fit's, in order
  std::int64_t nonfinite_skipped = 0;  // steps skipped for a non-finite loss (train.on_nonfinite)
  std::filesystem::path last_checkpoint;  // the newest checkpoint this fit wrote (empty: none yet)
  std::int64_t checkpoints_written = 0;   // by this fit
  std::int64_t epoch_samples = 0;    // training samples of this epoch so far (since a resume), all processes
  double lr = 0;                     // the learning rate of the last step
  std::filesystem::path resumed_from;  // empty: a fresh start

  bool finished = false;             // ended by max_steps or early stopping: nothing to resume
  SamplerPosition sampler;           // after a resume, or a stop, in the middle of an epoch
  EpochSums partial_sums;            // of that epoch

  const char* state_name() const override { return "loop"; }
  void save_state(StateSection& out) const override;
  void load_state(const StateSection& in) override;

  StopReason stop = StopReason::none;
  std::string stop_message;  // for a person: why early stopping stopped, which signal came

  // Writes a checkpoint of everything (weights, optimizer, this record, every callback's state).
  std::function<void(const std::filesystem::path&)> save_checkpoint;

  bool stopping() const { return stop != StopReason::none; }
  // The first reason stands, except that early stopping decided at the end of the epoch in
  // which max_steps was reached is the one reported (both end the run for good).
  void request_stop(StopReason reason, std::string message = "") {
    if (stop != StopReason::none && !(stop == StopReason::max_steps && reason == StopReason::early_stopping)) return;
    stop = reason;
    stop_message = std::move(message);
  }
};

}  // namespace plugtrain
