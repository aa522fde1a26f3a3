// plugtrain's trainer against a minimal hand-written LibTorch loop, same model, same data,
// same batch, same optimizer, in one process. Goal: the trainer within 3 % of the bare loop
// for the MLP at batch 100 (no time lost to the framework).
//
// The trainer's row is `plugtrain run` (bench/default_run.h: built by the run's own stages,
// every setting the default: the fused Adam, channels-last for the convnet, the host heap
// keeping freed memory), evaluating 100 test samples (data.test_subset; not what is timed).
// The bare loop is torch::optim::Adam on contiguous float batches, as a LibTorch user writes it,
// with the same host heap setting as the trainer's runs (held for the whole bench).
// Each benchmark trains one pass over the same training samples; the two loops alternate
// (bare, trainer, bare, trainer, ...) so machine noise hits both alike. After the runs the
// program prints samples/s for each and the ratio trainer / bare per model.
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/adam.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

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

using plugtrain::bench::median;

using namespace plugtrain;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kBatch = 100;

struct Fixture {
  PluginHost host{[] {
    SearchOptions o;
    o.use_environment = false;
    return o;
  }()};
  data::DatasetPair data;
  at::Tensor normalised;  // the bare loop's data: float, normalised once before timing
  const bench::HeldHostHeap heap;  // the bare loop's rows too
  const bench::FashionMnistExperiment recipe = bench::fashion_mnist_experiment("trainer-overhead-bench", kBatch, kBatch);
  const bench::ExperimentFile experiment{"trainer_overhead_bench", recipe.text};
  Fixture() {
    data = recipe.real ? data::load_idx_dataset(bench::fashion_mnist_dir())
                       : data::make_synthetic({1, 28, 28}, 10, 60000, 1000, 1);
    data.test = data::subset(data.test, kBatch);  // evaluation is not what is measured
    normalised = data.train.images.to(at::kFloat);
    if (data.train.bytes())
      normalised.div_(255).sub_(data.train.normalization.mean.at(0)).div_(data.train.normalization.std.at(0));
  }
  std::shared_ptr<Model> model(const std::string& name) {
    const RegisteredModel* m = host.models().find(name);
    std::map<std::string, OptionValue> values;
    for (const auto& o : m->spec.options) values[o.name] = o.default_value;
    at::manual_seed(1);
    return build_image_model(*m, data.train.sample_shape, data.train.num_classes, Options(values));
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

std::map<std::string, std::vector<double>> g_samples_per_second;  // "mlp/bare" -> runs

std::int64_t samples_for(const std::string& model) { return model == "mlp" ? 60000 : 6000; }

// The loop a LibTorch user writes by hand.
double bare_loop(const std::string& name) {
  Fixture& f = fixture();
  auto model = f.model(name);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  const data::Dataset train = data::subset(f.data.train, samples_for(name));
  model->train();
  const auto start = Clock::now();
  at::Tensor order = at::randperm(train.size(), at::kLong);
  for (std::int64_t i = 0; i < train.size(); i += kBatch) {
    at::Tensor index = order.slice(0, i, std::min(i + kBatch, train.size()));
    at::Tensor x = f.normalised.index_select(0, index);
    at::Tensor y = train.labels.index_select(0, index);
    optimizer.zero_grad();
    at::Tensor loss = at::cross_entropy_loss(forward_input(*model, x), y);
    loss.backward();
    optimizer.step();
  }
  return double(train.size()) / std::chrono::duration<double>(Clock::now() - start).count();
}

double trainer_loop(const std::string& name) {
  const std::unique_ptr<bench::DefaultRun> run = bench::build_default_run(
      fixture().experiment.path(),
      {"model.name=\"" + name + "\"", "data.train_subset=" + std::to_string(samples_for(name))});
  return run->trainer().fit().samples_per_second;
}

void Bare(benchmark::State& state, std::string name) {
  for (auto _ : state) {
    double sps = bare_loop(name);
    g_samples_per_second[name + "/bare"].push_back(sps);
    state.counters["samples_per_s"] = sps;
  }
}

void WithPlugtrain(benchmark::State& state, std::string name) {
  for (auto _ : state) {
    double sps = 0;
    try {
      sps = trainer_loop(name);
    } catch (const std::exception& e) {  // exit, not terminate: the fixture's files go with it
      std::fprintf(stderr, "trainer_overhead_bench: %s\n", e.what());
      std::exit(2);
    }
    g_samples_per_second[name + "/plugtrain"].push_back(sps);
    state.counters["samples_per_s"] = sps;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = 5;
  for (const std::string model : {"mlp", "convnet"}) {
    for (int r = 0; r < rounds; ++r) {
      benchmark::RegisterBenchmark(("Bare/" + model).c_str(), Bare, model)->Iterations(1)->Unit(benchmark::kSecond);
      benchmark::RegisterBenchmark(("Plugtrain/" + model).c_str(), WithPlugtrain, model)->Iterations(1)->Unit(benchmark::kSecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("\nbatch %lld, %d intra-op threads, median of %d alternating runs:\n", (long long)kBatch,
              at::get_num_threads(), rounds);
  for (const std::string model : {"mlp", "convnet"}) {
    const double bare = median(g_samples_per_second[model + "/bare"]);
    const double ours = median(g_samples_per_second[model + "/plugtrain"]);
    if (bare <= 0 || ours <= 0) continue;
    std::printf("  %-8s bare LibTorch %8.0f samples/s   plugtrain %8.0f samples/s   ratio %.3f\n", model.c_str(), bare,
                ours, ours / bare);
  }
  return 0;
}
