// A benchmark's plugtrain row, built as `plugtrain run` builds a run of one process: the
// experiment file validated, planned and built by the run's own stages (core/run), with --set
// overrides on top, but no run folder, and the log kept in memory. So the row measures the
// defaults a user gets (the memory format, the optimizer's implementation, the loader, the
// host heap, ...); a row that deviates says so through its overrides.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "process/host_heap.h"
#include "run/build.h"
#include "run/plan.h"
#include "run/validate.h"
#include "train/step_timer.h"

namespace plugtrain::bench {

// The [optim] and [train] tables of examples/cifar10_resnet18.toml's recipe (SGD lr 0.1,
// Nesterov momentum 0.9, weight decay 5e-4), for one epoch without step lines: what the
// convolutional benchmarks and their Python peers train with.
inline constexpr const char* kSgdRecipeTables = R"([optim]
name = "sgd"
lr = 0.1
momentum = 0.9
nesterov = true
weight_decay = 5e-4
[train]
epochs = 1
log_interval = 0
)";

// The Fashion-MNIST benchmarks' experiment, on the CPU backend (they compare with LibTorch on
// the CPU, and on a GPU machine the first usable backend is CUDA): the mlp (its defaults), Adam
// lr 1e-3, one epoch without step lines, on the real files where they are ($FASHION_MNIST, else
// Debian's folder), else synthetic data of their shape; `batch`, only the first `test_subset`
// test samples (the end-of-epoch evaluation is not what they time) and any further [data] lines.
struct FashionMnistExperiment {
  bool real = false;  // the real files, not synthetic data
  std::string text;
};

// Where the real Fashion-MNIST is: $FASHION_MNIST (a GPU machine with the Debian package
// unpacked elsewhere), else Debian's folder.
inline std::string fashion_mnist_dir() {
  const char* env = std::getenv("FASHION_MNIST");
  return env && *env ? env : "/usr/share/datasets/fashion-mnist";
}
inline FashionMnistExperiment fashion_mnist_experiment(const std::string& name, std::int64_t batch,
                                                       std::int64_t test_subset, const std::string& data_lines = "") {
  FashionMnistExperiment x;
  x.real = std::filesystem::exists(fashion_mnist_dir());
  x.text = "[experiment]\nname = \"" + name + "\"\nseed = 1\n[backend]\nname = \"cpu\"\n" +
           "[model]\nname = \"mlp\"\n[data]\n" +
           (x.real ? std::string("dataset = \"fashion-mnist\"\npath = \"") + fashion_mnist_dir() + "\"\n"
                   : std::string("dataset = \"synthetic\"\nsynthetic_shape = [1, 28, 28]\n"
                                 "synthetic_train_size = 60000\nsynthetic_test_size = 1000\n")) +
           "batch_size = " + std::to_string(batch) + "\ntest_subset = " + std::to_string(test_subset) + "\n" +
           data_lines + "[optim]\nname = \"adam\"\nlr = 1e-3\n[train]\nepochs = 1\nlog_interval = 0\n";
  return x;
}

// An experiment file in the temporary folder, named after the bench and this process, removed
// when it goes (a bench catches its errors in main, so this happens on a bad --set too).
class ExperimentFile {
 public:
  ExperimentFile(const std::string& bench, const std::string& text)
      : path_(std::filesystem::temp_directory_path() / (bench + "_" + std::to_string(::getpid()) + ".toml")) {
    std::ofstream(path_) << text;
  }
  ~ExperimentFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  ExperimentFile(const ExperimentFile&) = delete;
  ExperimentFile& operator=(const ExperimentFile&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The host heap setting of a run on the CPU (process/host_heap.h), held for a whole bench: its bare
// LibTorch rows then have the same heap as plugtrain's rows in every round, rather than glibc's
// own in the first round and what a finished run put back in the others.
class HeldHostHeap {
 public:
  HeldHostHeap() : change_(keep_freed_host_memory()) {}
  ~HeldHostHeap() {
    if (change_.changed) restore_host_heap();
  }
  HeldHostHeap(const HeldHostHeap&) = delete;
  HeldHostHeap& operator=(const HeldHostHeap&) = delete;
  const std::string& line() const { return change_.line; }

 private:
  HostHeapChange change_;
};

struct DefaultRun {
  DefaultRun() = default;
  // The built run refers to `run`, `plan` and `log`: never copied or moved.
  DefaultRun(const DefaultRun&) = delete;
  DefaultRun& operator=(const DefaultRun&) = delete;

  ValidatedRun run;
  RunPlan plan;
  std::ostringstream log;  // the run's log: its callbacks write here as long as it trains
  std::unique_ptr<BuiltRun> built;
  Trainer& trainer() { return *built->trainer; }
  // The mean seconds of `steps` more training steps, from one StepTimer kept for the bench's life:
  // a row timed a step or a few per round (rows alternating) takes warm steps with the same
  // loader and step object every round, as a run does, not a new loader's first batch.
  // `settle` untimed steps first: after another model's steps the first one runs with caches
  // full of that model, which a run, training one model, never sees.
  double step_seconds(std::int64_t steps = 1, std::int64_t settle = 0) {
    if (!timer) timer = trainer().step_timer();
    if (settle > 0) timer->time(settle);
    const std::vector<double> each = timer->time(steps);
    double sum = 0;
    for (double s : each) sum += s;
    return sum / double(each.size());
  }
  std::unique_ptr<StepTimer> timer;  // declared after `built`: it goes first
};

inline std::unique_ptr<DefaultRun> build_default_run(const std::filesystem::path& experiment,
                                                     const std::vector<std::string>& overrides) {
  RunRequest request;
  request.experiment_file = experiment;
  request.overrides = overrides;
  auto r = std::make_unique<DefaultRun>();
  r->run = validate(request);
  r->plan = plan_run(r->run, run_trials(r->run, {}, std::nullopt), {}, std::nullopt);
  r->built = build_run(r->run, r->plan, nullptr, nullptr, r->log);
  return r;
}

}  // namespace plugtrain::bench
