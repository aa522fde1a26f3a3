// How close a CPU training step comes to its matrix products: the Fashion-MNIST MLP
// (784-256-128-10, batch 100, Adam) in one process, four ways:
//   gemm            the nine GEMMs of one step alone (3 forward, 6 backward, the shapes and
//                   transpositions autograd uses), into preallocated outputs: the GEMM-bound limit
//   bare            a hand-written LibTorch loop with torch::optim::Adam
//   plugtrain       one epoch of training as `plugtrain run` does it (bench/default_run.h: the
//                   experiment validated, planned and built by the run's own stages; every
//                   setting the default, which is the fused Adam), timed by the trainer
//   plugtrain loop  the same with optim.impl = "loop" (the one deviation, named in its row)
// Both plugtrain rows evaluate only 100 test samples (data.test_subset): the end-of-epoch
// evaluation is not part of the training throughput measured, and it is kept short.
// Each round runs the four once, in turn, so machine noise hits them alike; the table shows the
// median of the rounds in samples/s, the ratio to the GEMM-bound figure, and for plugtrain where
// the step time went (its phase timer). Goal: plugtrain's step at >= 0.5x the GEMM-bound figure.
//
//   cpu_step_bench [--rounds N] [--samples N] [--threads N]
//   (defaults 5, 60000: one Fashion-MNIST epoch, and LibTorch's intra-op threads)
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/adam.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "bench_stats.h"
#include "data/dataset.h"
#include "default_run.h"
#include "plugins/model_forward.h"
#include "plugins/plugin_host.h"
#include "readers/idx_dataset.h"
#include "readers/synthetic.h"
#include "run/build.h"
#include "train/trainer.h"

namespace {

using namespace plugtrain;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kBatch = 100;
constexpr std::int64_t kIn = 784, kH1 = 256, kH2 = 128, kOut = 10;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Fixture {
  PluginHost host{[] {
    SearchOptions o;
    o.use_environment = false;
    return o;
  }()};
  data::DatasetPair data;
  at::Tensor normalised;  // the bare loop's inputs: float, normalised once before timing
  std::string source;
  std::unique_ptr<bench::ExperimentFile> experiment;  // the plugtrain rows'
  explicit Fixture(std::int64_t samples) {
    const bool real = std::filesystem::exists(bench::fashion_mnist_dir());
    source = real ? "Fashion-MNIST" : "synthetic 1x28x28 (no Fashion-MNIST)";
    data = real ? data::load_idx_dataset(bench::fashion_mnist_dir())
                : data::make_synthetic({1, 28, 28}, 10, 60000, 1000, 1);
    data.train = data::subset(data.train, std::min(samples, data.train.size()));
    data.test = data::subset(data.test, kBatch);  // evaluation is not what is measured
    normalised = data.train.images.to(at::kFloat).flatten(1);
    if (data.train.bytes())
      normalised.div_(255).sub_(data.train.normalization.mean.at(0)).div_(data.train.normalization.std.at(0));
    experiment = std::make_unique<bench::ExperimentFile>(
        "cpu_step_bench", bench::fashion_mnist_experiment("cpu-step-bench", kBatch, kBatch,
                                                          "train_subset = " + std::to_string(data.train.size()) + "\n")
                              .text);
  }
  std::shared_ptr<Model> mlp() {
    const RegisteredModel* m = host.models().find("mlp");
    std::map<std::string, OptionValue> values;
    for (const auto& o : m->spec.options) values[o.name] = o.default_value;  // hidden [256, 128], relu
    at::manual_seed(1);
    return build_image_model(*m, data.train.sample_shape, data.train.num_classes, Options(values));
  }
};

// The matrix products of one step as autograd runs them for y = x W^T + b per layer:
// forward x.mm(W.t()); backward dX = dY.mm(W), dW = dY.t().mm(X). Autograd skips the first
// layer's dX (the input needs no gradient): `with_first_dx` counts it (the nine) or not.
double gemm_only(std::int64_t steps, bool with_first_dx) {
  const auto f = at::TensorOptions().dtype(at::kFloat);
  at::Tensor x = at::randn({kBatch, kIn}, f), w1 = at::randn({kH1, kIn}, f), w2 = at::randn({kH2, kH1}, f),
             w3 = at::randn({kOut, kH2}, f);
  at::Tensor h1 = at::empty({kBatch, kH1}, f), h2 = at::empty({kBatch, kH2}, f), y = at::empty({kBatch, kOut}, f);
  at::Tensor dy = at::randn({kBatch, kOut}, f), dh2 = at::empty({kBatch, kH2}, f), dh1 = at::empty({kBatch, kH1}, f),
             dx = at::empty({kBatch, kIn}, f);
  at::Tensor dw3 = at::empty_like(w3), dw2 = at::empty_like(w2), dw1 = at::empty_like(w1);
  at::NoGradGuard no_grad;
  auto one = [&] {
    at::mm_out(h1, x, w1.t());
    at::mm_out(h2, h1, w2.t());
    at::mm_out(y, h2, w3.t());
    at::mm_out(dw3, dy.t(), h2);
    at::mm_out(dh2, dy, w3);
    at::mm_out(dw2, dh2.t(), h1);
    at::mm_out(dh1, dh2, w2);
    at::mm_out(dw1, dh1.t(), x);
    if (with_first_dx) at::mm_out(dx, dh1, w1);
  };
  for (int i = 0; i < 20; ++i) one();  // warm-up
  const auto start = Clock::now();
  for (std::int64_t i = 0; i < steps; ++i) one();
  return double(steps * kBatch) / seconds_since(start);
}

// The loop a LibTorch user writes by hand.
double bare_loop(Fixture& f) {
  auto model = f.mlp();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  const data::Dataset& train = f.data.train;
  model->train();
  const auto start = Clock::now();
  at::Tensor order = at::randperm(train.size(), at::kLong);
  for (std::int64_t i = 0; i + kBatch <= train.size(); i += kBatch) {
    at::Tensor index = order.slice(0, i, i + kBatch);
    at::Tensor x = f.normalised.index_select(0, index);
    at::Tensor y = train.labels.index_select(0, index);
    optimizer.zero_grad();
    at::Tensor loss = at::cross_entropy_loss(forward_input(*model, x), y);
    loss.backward();
    optimizer.step();
  }
  return double(train.size() / kBatch * kBatch) / seconds_since(start);
}

struct TrainerFigures {
  double samples_per_second = 0;
  std::string phases;
};

// One epoch of `plugtrain run` with the bench's experiment; `overrides` as --set takes them.
TrainerFigures plugtrain_epoch(Fixture& f, const std::vector<std::string>& overrides) {
  const std::unique_ptr<bench::DefaultRun> run = bench::build_default_run(f.experiment->path(), overrides);
  const TrainSummary s = run->trainer().fit();
  return {s.samples_per_second, s.epochs.empty() ? "" : s.epochs.front().phases.text()};
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

int bench_rounds(int rounds, std::int64_t samples) {
  const bench::HeldHostHeap heap;
  Fixture f(samples);
  const std::int64_t steps = f.data.train.size() / kBatch;
  std::printf("MLP 784-256-128-10, batch %lld, Adam, %s, %lld samples per run, %d intra-op threads, %d rounds\n",
              (long long)kBatch, f.source.c_str(), (long long)f.data.train.size(), at::get_num_threads(), rounds);
  std::printf("load average before: %s\n", load_average().c_str());
  if (!heap.line().empty()) std::printf("%s: every row, the bare loop's too\n", heap.line().c_str());
  std::map<std::string, std::vector<double>> sps;
  std::map<std::string, std::string> phases;
  for (int r = 0; r < rounds; ++r) {
    sps["gemm9"].push_back(gemm_only(steps, true));
    sps["gemm8"].push_back(gemm_only(steps, false));
    sps["bare"].push_back(bare_loop(f));
    for (const std::string row : {"loop", "default"}) {
      const TrainerFigures t =
          plugtrain_epoch(f, row == "loop" ? std::vector<std::string>{"optim.impl=\"loop\""} : std::vector<std::string>{});
      sps[row].push_back(t.samples_per_second);
      phases[row] = t.phases;
    }
    std::printf("round %d: gemm %.0f, bare %.0f, plugtrain %.0f, plugtrain loop %.0f samples/s\n", r + 1,
                sps["gemm9"].back(), sps["bare"].back(), sps["default"].back(), sps["loop"].back());
    std::fflush(stdout);
  }
  const double bound = bench::median(sps["gemm9"]);
  std::printf("\nmedian of %d rounds (load average after: %s)\n", rounds, load_average().c_str());
  std::printf("  %-44s %10s %10s %9s\n", "", "samples/s", "ms/step", "x gemm");
  auto row = [&](const char* name, double v) {
    std::printf("  %-44s %10.0f %10.3f %9.3f\n", name, v, v > 0 ? 1000.0 * kBatch / v : 0.0, v / bound);
  };
  row("(1) 9 GEMMs alone: the GEMM-bound limit", bound);
  row("    (the 8 autograd runs: no dX of layer 1)", bench::median(sps["gemm8"]));
  row("(2) bare torch::optim loop", bench::median(sps["bare"]));
  row("(3) plugtrain run's defaults (fused Adam)", bench::median(sps["default"]));
  row("(4) the same, optim.impl = \"loop\"", bench::median(sps["loop"]));
  std::printf("\nplugtrain phases (last round): defaults %s\n", phases["default"].c_str());
  std::printf("                               loop     %s\n", phases["loop"].c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::int64_t samples = 60000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--samples") && i + 1 < argc) samples = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) at::set_num_threads(std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: cpu_step_bench [--rounds N] [--samples N] [--threads N]\n");
      return 2;
    }
  }
  try {
    return bench_rounds(rounds, samples);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpu_step_bench: %s\n", e.what());
    return 2;
  }
}
