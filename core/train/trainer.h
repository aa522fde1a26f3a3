// The training loop: epochs of training and evaluation, per-step and per-epoch figures,
// and a summary. The model, data, device and loader settings come in ready-made.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "config/experiment.h"
#include "data/dataset.h"
#include "plugtrain/backend.h"
#include "plugtrain/model.h"

namespace plugtrain {

struct EpochMetrics {
  std::int64_t epoch = 0;  // 1-based
  double train_loss = 0, train_accuracy = 0;
  std::optional<double> test_loss, test_accuracy;
  double samples_per_second = 0;  // training samples over training time
  double seconds = 0;             // the whole epoch, evaluation included
  double lr = 0;                  // at the end of the epoch
  MemoryInfo memory;              // the backend's memory figures at the end of the epoch
};

struct TrainSummary {
  std::vector<EpochMetrics> epochs;  // this process's epochs (a resumed run starts later)
  bool interrupted = false;          // stopped by SIGINT/SIGTERM after writing last.ckpt
  bool stopped_early = false;        // early stopping
  std::string stop_reason;
  std::int64_t steps = 0;
  std::int64_t skipped_steps = 0;  // fp16 steps skipped because gradients overflowed
  double best_test_accuracy = 0;
  std::int64_t best_epoch = 0;
  double final_test_accuracy = 0, final_test_loss = 0;
  double total_seconds = 0;
  double samples_per_second = 0;  // all training samples over all training time
};

struct Evaluation {
  double loss = 0, accuracy = 0;
};

class Collectives;
class DataParallel;

// With collectives, each rank evaluates its share of the data set and the sums are combined:
// every rank gets the figures for the whole set. With replicas (dp), each batch is split over
// them; `model` is replica 0.
Evaluation evaluate(Model& model, const data::Dataset& dataset, std::int64_t batch_size, c10::Device device,
                    const LoaderConfig& loader, const std::string& precision = "fp32",
                    Collectives* collectives = nullptr, DataParallel* replicas = nullptr);

// Where a run keeps its files and what it resumes from.
struct RunFiles {
  std::filesystem::path checkpoints;  // folder; empty: no checkpoints
  std::filesystem::path metrics_csv;  // empty: none
  std::filesystem::path tensorboard;  // folder for event files; empty: none
  std::string experiment_json;        // stored in checkpoints
  std::filesystem::path resume_from;  // empty: a fresh start
  std::ostream* progress = nullptr;   // the terminal, for a progress bar; null: none
};

class Trainer {
 public:
  // memory: asked once per epoch for the device's memory figures (may be empty).
  // collectives: set in a multi-process (ddp) run. Each rank then trains on its shard with
  // experiment.batch_size samples per step, gradients are averaged over the ranks, and the
  // figures are those of all ranks together. Only the rank given files and a real log writes.
  // replicas: set in a dp run (`model` is its replica 0). Each step's experiment.batch_size
  // samples are split over the replicas, and their gradients summed into `model`'s.
  Trainer(const Experiment& experiment, std::shared_ptr<Model> model, const data::DatasetPair& data,
          c10::Device device, LoaderConfig loader, std::ostream& log, std::function<MemoryInfo()> memory = {},
          RunFiles files = {}, Collectives* collectives = nullptr, DataParallel* replicas = nullptr);
  TrainSummary fit();

 private:
  const Experiment& experiment_;
  std::shared_ptr<Model> model_;
  const data::DatasetPair& data_;
  c10::Device device_;
  LoaderConfig loader_;
  std::ostream& log_;
  std::function<MemoryInfo()> memory_;
  RunFiles files_;
  Collectives* collectives_;
  DataParallel* replicas_;
};

}  // namespace plugtrain
