// ResNet-18 in its CIFAR form (the bundled models plugin's resnet18 with stem = "cifar";
// torchvision.models.resnet18(num_classes=10) with a 3x3 stride-1 conv1 and no max-pool on the
// Python side, 11,173,962 parameters both), batch 128 of 3x32x32, fp32, train mode, SGD lr 0.1
// momentum 0.9 Nesterov weight decay 5e-4: training samples/s of
//   - plugtrain as `plugtrain run` trains it (bench/default_run.h: the experiment validated,
//     planned and built by the run's own stages, every other setting the default: channels-last,
//     the fused SGD, the host heap keeping freed memory; synthetic uint8 CIFAR-shaped data with
//     random_crop + horizontal_flip, batches made on the training thread as the CPU backend
//     asks), one step being DefaultRun::step_seconds(),
//   - the same with train.memory_format = "contiguous" (the one deviation, named in its row),
//   - a bare LibTorch loop with the same model on normalised float batches, contiguous (NCHW)
//     and channels_last (model and batches),
//   - the Python PyTorch peer (bench/python/resnet_cifar_peer.py), eager, channels_last and
//     contiguous,
// The bare loop runs in this process while the plugtrain rows are alive, so it has their host
// heap setting too (freed memory kept for the next step, process/host_heap.h); the Python peer
// has glibc's own.
// All in this one invocation with the same number of intra-op threads (the peer runs beside
// the bench and is asked for one step at a time). A step takes seconds on 2 cores, so each row
// is 5 timed steps after 2 warm-up steps, and the rows alternate step by step (every row's
// first step, then every row's second, ...) so that machine noise hits all alike; the figure
// is the median step. Afterwards the program prints a table and the ratios plugtrain / Python
// channels_last and plugtrain / bare loop. Without Python or torchvision the peer's rows say
// why they were skipped.
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/sgd.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "data/batch_loader.h"
#include "data/dataset.h"
#include "data/from_experiment.h"
#include "default_run.h"
#include "plugins/model_forward.h"
#include "plugins/plugin_host.h"
#include "python_peer.h"
#include "run/build.h"
#include "train/trainer.h"

namespace {

using plugtrain::bench::median;

using namespace plugtrain;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kBatch = 128;
constexpr int kWarmup = 2, kSteps = 5;
constexpr std::int64_t kTorchvisionParameters = 11'173'962;

struct Fixture {
  PluginHost host{[] {
    SearchOptions o;
    o.use_environment = false;
    return o;
  }()};
  data::DatasetPair data;  // the trainer's: uint8 CIFAR-shaped images, CIFAR-10's statistics
  std::vector<at::Tensor> inputs, targets;  // the bare loop's: normalised float batches
  LoaderConfig loader;
  Fixture() {
    at::manual_seed(1);
    const std::int64_t n = 4 * kBatch;  // time_steps starts another epoch when one runs out
    data.train.images = at::randint(0, 256, {n, 3, 32, 32}, at::TensorOptions().dtype(at::kByte));
    data.train.labels = at::randint(0, 10, {n}, at::TensorOptions().dtype(at::kLong));
    data.train.num_classes = 10;
    data.train.sample_shape = {3, 32, 32};
    data.train.normalization = {{0.4914, 0.4822, 0.4465}, {0.2470, 0.2435, 0.2616}};
    data.test = data::subset(data.train, kBatch);
    for (int i = 0; i < 4; ++i) {
      inputs.push_back(at::randn({kBatch, 3, 32, 32}));
      targets.push_back(at::randint(0, 10, {kBatch}, at::TensorOptions().dtype(at::kLong)));
    }
    loader = host.backend("cpu")->loader_config({0});
  }
  std::shared_ptr<Model> model() {
    const RegisteredModel* m = host.models().find("resnet18");
    std::map<std::string, OptionValue> values;
    for (const auto& o : m->spec.options) values[o.name] = o.default_value;
    values["stem"] = std::string("cifar");
    at::manual_seed(1);
    return build_image_model(*m, {3, 32, 32}, 10, Options(values));
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// Every 4-d parameter (the convolutions' weights) in channels_last, in place: the same
// tensors, so an optimizer built before or after sees them.
void to_channels_last(Model& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
}

// One configuration's training state, kept between its steps (the rounds alternate them).
struct BareRun {
  std::shared_ptr<Model> model;
  std::unique_ptr<torch::optim::SGD> optimizer;
  std::vector<at::Tensor> inputs;
  int steps = 0;
  explicit BareRun(bool channels_last) {
    Fixture& f = fixture();
    model = f.model();
    if (channels_last) to_channels_last(*model);
    optimizer = std::make_unique<torch::optim::SGD>(
        model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(5e-4));
    for (const auto& x : f.inputs)
      inputs.push_back(x.contiguous(channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous));
    model->train();
  }
  // The step a LibTorch user writes by hand.
  double step() {
    const size_t i = size_t(steps++ % 4);
    const auto start = Clock::now();
    optimizer->zero_grad();
    at::Tensor loss = at::cross_entropy_loss(forward_input(*model, inputs[i]), fixture().targets[i]);
    loss.backward();
    optimizer->step();
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
};

// The experiment of the plugtrain rows: examples/cifar10_resnet18.toml's recipe on synthetic
// data of CIFAR's shape.
std::filesystem::path experiment_file() {
  static const bench::ExperimentFile file("resnet_cifar_bench", std::string(R"([experiment]
name = "resnet-cifar-bench"
seed = 1
[model]
name = "resnet18"
stem = "cifar"
[data]
dataset = "synthetic"
synthetic_shape = [3, 32, 32]
synthetic_classes = 10
synthetic_train_size = 512
synthetic_test_size = 128
batch_size = 128
augmentation = ["random_crop", "horizontal_flip"]
crop_padding = 4
)") + bench::kSgdRecipeTables);
  return file.path();
}

struct TrainerRun {
  std::unique_ptr<bench::DefaultRun> run;
  explicit TrainerRun(bool contiguous)
      : run(bench::build_default_run(experiment_file(), contiguous ? std::vector<std::string>{"train.memory_format=\"contiguous\""}
                                                                    : std::vector<std::string>{})) {}
  // One step as the Trainer times it: the batch made by its BatchLoader (crop + flip +
  // normalise on the training thread, as the CPU backend asks), forward, backward, SGD.
  double step() { return run->step_seconds(); }
};

std::map<std::string, std::vector<double>> g_step_seconds;  // row -> the timed steps' wall times
std::map<std::string, std::vector<double>> g_step_cpu;      // row -> their CPU time (all threads)
std::int64_t g_plugtrain_parameters = 0;
std::unique_ptr<plugtrain::bench::PythonPeer> g_python;

plugtrain::bench::PythonPeer& python() {
  if (!g_python)
    g_python = std::make_unique<plugtrain::bench::PythonPeer>(
        "resnet_cifar_peer.py",
        std::vector<std::string>{"--threads", std::to_string(at::get_num_threads()), "--batch", std::to_string(kBatch)});
  return *g_python;
}

// What the trainer's step spends making its batch on the training thread (the CPU backend's
// loader: no workers, no prefetch): crop + flip + normalise of kBatch samples, median of 20.
double batch_seconds(const Experiment& e) {
  Fixture& f = fixture();
  data::BatchLoader loader(f.data.train, kBatch, /*shuffle=*/true, data::augment_options(e.data.augment), f.loader,
                           c10::Device(c10::kCPU), 1);
  std::vector<double> seconds;
  for (std::int64_t epoch = 0; seconds.size() < 20; ++epoch) {
    loader.start_epoch(epoch);
    for (;;) {
      const auto start = Clock::now();
      if (!loader.next()) break;
      seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  }
  return median(seconds);
}

// The rows' states; cleared before the plugin host goes (the models' code is the plugin's).
std::map<std::string, std::unique_ptr<BareRun>> g_bare_runs;
std::map<std::string, std::unique_ptr<TrainerRun>> g_trainer_runs;

double process_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct StepTime {
  double wall = -1, cpu = -1;  // seconds; wall < 0: the peer is skipped
};

// One step of a C++ row, with the CPU time this process spent on it.
template <typename Run>
StepTime timed_step(Run& run) {
  const double cpu = process_cpu_seconds();
  const double wall = run.step();
  return {wall, process_cpu_seconds() - cpu};
}

// The rows: one step of row `name` per call.
StepTime one_step(const std::string& name) {
  if (name == "bare" || name == "bare_cl") {
    auto& run = g_bare_runs[name];
    if (!run) run = std::make_unique<BareRun>(name == "bare_cl");
    return timed_step(*run);
  }
  if (name == "trainer" || name == "trainer_contiguous") {
    auto& run = g_trainer_runs[name];
    if (!run) {
      run = std::make_unique<TrainerRun>(name == "trainer_contiguous");
      g_plugtrain_parameters = run->run->built->parameters;
    }
    return timed_step(*run);
  }
  // python_channels_last, python_contiguous
  const nlohmann::json answer = python().ask("step " + name.substr(std::string("python_").size()));
  if (answer.is_null()) return {};
  return {answer.at("seconds").get<double>(), answer.at("cpu_seconds").get<double>()};
}

void Step(benchmark::State& state, const std::string& name, bool timed) {
  for (auto _ : state) {
    StepTime t;
    try {
      t = one_step(name);
    } catch (const std::exception& e) {  // exit, not terminate: the experiment file goes with it
      std::fprintf(stderr, "resnet_cifar_bench: %s\n", e.what());
      std::exit(2);
    }
    const double seconds = t.wall;
    if (seconds < 0) {  // the peer is skipped
      state.SetIterationTime(0);
      state.SetLabel("python peer: skipped (" + python().skipped() + ")");
      continue;
    }
    if (timed) {
      g_step_seconds[name].push_back(seconds);
      g_step_cpu[name].push_back(t.cpu);
    }
    state.SetIterationTime(seconds);
    state.counters["samples_per_s"] = double(kBatch) / seconds;
    state.counters["cpu_s"] = t.cpu;
  }
}

std::string with_commas(std::int64_t v) {
  std::string s = std::to_string(v);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(size_t(i), ",");
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  // Round-major: every row's step 1, every row's step 2, ...: the rows alternate, so machine
  // noise (2 shared cores) hits each alike. The first kWarmup rounds are not counted.
  const std::vector<std::pair<std::string, std::string>> order{
      {"trainer", "plugtrain_trainer"},
      {"bare", "bare_contiguous"},
      {"python_contiguous", "python_contiguous"},
      {"trainer_contiguous", "plugtrain_trainer_contiguous"},
      {"bare_cl", "bare_channels_last"},
      {"python_channels_last", "python_channels_last"},
  };
  for (int round = 0; round < kWarmup + kSteps; ++round)
    for (const auto& [row, name] : order) {
      const bool timed = round >= kWarmup;
      benchmark::RegisterBenchmark(("ResNet18Cifar/" + name + (timed ? "/step" : "/warmup")).c_str(),
                                   [row = row, timed](benchmark::State& s) { Step(s, row, timed); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kSecond);
    }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::printf("\nResNet-18, CIFAR form, batch %lld of 3x32x32, fp32, train mode, SGD lr 0.1 momentum 0.9 nesterov wd 5e-4\n",
              (long long)kBatch);
  std::printf("%d intra-op threads on both sides; median of %d timed steps (rows alternating) after %d warm-up steps\n\n",
              at::get_num_threads(), kSteps, kWarmup);
  const struct {
    const char* key;
    const char* what;
  } rows[] = {
      {"trainer", "(a) plugtrain run's defaults, crop+flip"},
      {"trainer_contiguous", "    same, train.memory_format = contiguous"},
      {"bare", "(b) bare LibTorch loop, contiguous"},
      {"bare_cl", "    bare LibTorch loop, channels_last"},
      {"python_channels_last", "(c) Python eager, channels_last"},
      {"python_contiguous", "(d) Python eager, contiguous"},
  };
  std::map<std::string, double> sps, best_sps;
  // CPU s: the process's CPU time (all threads) per step; with N threads busy it is about N x
  // the step's wall time, and much less when other work on the machine takes the cores.
  // best: the fastest timed step; other work on a shared machine only ever adds time, so it is
  // the closest to the row's speed on an idle machine.
  std::printf("  %-46s %20s %20s %9s\n", "", "median", "best", "median");
  std::printf("  %-46s %8s %11s %8s %11s %9s\n", "", "step s", "samples/s", "step s", "samples/s", "CPU s");
  for (const auto& r : rows) {
    const auto it = g_step_seconds.find(r.key);
    if (it == g_step_seconds.end() || it->second.empty()) {
      const bool python = std::string(r.key).rfind("python", 0) == 0;
      std::printf("  %-46s %s\n", r.what,
                  python && g_python && !g_python->ok() ? ("python peer: skipped (" + g_python->skipped() + ")").c_str()
                                                        : "not run");
      continue;
    }
    const double step = median(it->second);
    sps[r.key] = double(kBatch) / step;
    const double best = *std::min_element(it->second.begin(), it->second.end());
    best_sps[r.key] = double(kBatch) / best;
    std::printf("  %-46s %8.3f %11.1f %8.3f %11.1f %9.3f\n", r.what, step, sps[r.key], best, best_sps[r.key],
                median(g_step_cpu[r.key]));
  }
  // Samples/s of row a over row b: the ratio of the medians, the median of the per-round ratios
  // (the rows alternate, so the two steps of one round met nearly the same load on the shared
  // machine) and the ratio of the best steps.
  auto ratio = [&](const char* what, const char* a, const char* b) {
    if (!sps.count(a) || !sps.count(b)) return;
    const auto &ta = g_step_seconds[a], &tb = g_step_seconds[b];
    std::vector<double> per_round;
    for (size_t r = 0; r < std::min(ta.size(), tb.size()); ++r) per_round.push_back(tb[r] / ta[r]);
    std::printf("  %-46s %8.3f %11.3f %8.3f\n", what, sps[a] / sps[b], median(per_round), best_sps[a] / best_sps[b]);
  };
  std::printf("\n  %-46s %8s %11s %8s\n", "ratios of samples/s", "medians", "per round", "bests");
  ratio("plugtrain / Python channels_last", "trainer", "python_channels_last");
  ratio("plugtrain / Python contiguous", "trainer", "python_contiguous");
  ratio("plugtrain / bare LibTorch (channels_last)", "trainer", "bare_cl");
  ratio("plugtrain / plugtrain contiguous", "trainer", "trainer_contiguous");
  ratio("bare channels_last / bare contiguous", "bare_cl", "bare");
  ratio("Python channels_last / Python contiguous", "python_channels_last", "python_contiguous");
  ratio("bare contiguous / Python contiguous", "bare", "python_contiguous");
  ratio("bare channels_last / Python channels_last", "bare_cl", "python_channels_last");

  if (sps.count("trainer") && g_trainer_runs.count("trainer")) {
    const double batch = batch_seconds(g_trainer_runs["trainer"]->run->run.experiment);
    std::printf("  of the trainer's step, making the batch (crop + flip + normalise, training thread): %.1f ms (%.2f %%)\n",
                1000 * batch, 100 * batch * sps["trainer"] / double(kBatch));
  }

  int rc = 0;
  if (g_plugtrain_parameters) {
    std::printf("\nparameters: plugtrain resnet18 (stem cifar) %s", with_commas(g_plugtrain_parameters).c_str());
    if (g_python && g_python->ok()) {
      const nlohmann::json& hello = g_python->hello();
      const std::int64_t theirs = hello.at("parameters").get<std::int64_t>();
      std::printf(", torchvision %s (torch %s, torchvision %s, %d threads)", with_commas(theirs).c_str(),
                  hello.at("torch").get<std::string>().c_str(), hello.at("torchvision").get<std::string>().c_str(),
                  hello.at("threads").get<int>());
      if (theirs != g_plugtrain_parameters) rc = 1;
    }
    if (g_plugtrain_parameters != kTorchvisionParameters) rc = 1;
    std::printf("%s\n", rc ? "  MISMATCH (expected 11,173,962)" : "  (equal)");
  }
  if (g_python && !g_python->ok()) std::printf("python peer: skipped (%s)\n", g_python->skipped().c_str());
  g_python.reset();
  g_trainer_runs.clear();
  g_bare_runs.clear();
  return rc;
}
