// The model zoo against torchvision: training samples/s of every zoo model a user compares with
// its torchvision twin, plugtrain's side exactly as `plugtrain run` trains it and the Python
// side as a PyTorch user writes it, in one invocation.
//
//   plugtrain  an experiment (synthetic uint8 data of the model's input shape, 10 classes, the
//              batch below, SGD lr 0.1 momentum 0.9 Nesterov weight decay 5e-4) validated,
//              planned and built by the run's own stages (what `plugtrain run` and `plugtrain
//              bench` do), every other setting the default: on the CPU backend that is
//              channels-last for these convolutional models, the fused SGD, fp32, the loader
//              making each batch (normalise) on the training thread. One step is
//              DefaultRun::step_seconds(): the batch, forward, backward, optimizer.
//   torchvision  bench/python/zoo_peer.py: torchvision.models.<name>(num_classes=10) (ResNet-18
//              in CIFAR form: conv1 3x3 stride 1, no max-pool), channels_last model and
//              normalised float batches, torch.optim.SGD with the same settings, eager.
// Both use this process's intra-op threads. Rows alternate step by step (every row's step 1,
// then every row's step 2, ...) so machine noise hits all alike; the first rounds are warm-up.
// The table: median samples/s per side, the ratio plugtrain / torchvision (of the medians, and
// the median of the per-round ratios), and how close each side gets to what its convolutions
// allow: the best float32 matrix-product speed measured here (GFLOP/s; BLAS, or a 1x1
// convolution through the convolution library) over 6 x the model's multiply-adds per sample
// (forward, and backward's two products per layer).
//
//   zoo_bench [--rounds N] [--warmup N] [--only name,name] [--set key=value ...]
//   (defaults 4 and 1: all models; --set changes every plugtrain row's experiment, as `plugtrain
//   run --set` does, e.g. --set train.keep_host_memory=false, and the table says so)
// Exit 1 when a model's parameter count differs from its torchvision twin's.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "default_run.h"
#include "describe/model_summary.h"
#include "python_peer.h"

namespace {

using namespace plugtrain;
using Clock = std::chrono::steady_clock;

// One zoo model and the layout its torchvision twin is built in. Small batches and 128 px
// ImageNet-form inputs keep a round within a minute on 2 cores.
struct ZooModel {
  std::string label;                 // the row's name
  std::string model;                 // plugtrain's model.name, and the peer's builder
  std::vector<std::string> options;  // [model] options, as --set takes them
  std::int64_t batch, size;          // batch, and H = W of the 3-channel input
};

const std::vector<ZooModel>& zoo() {
  static const std::vector<ZooModel> models{
      {"resnet18_cifar", "resnet18", {"stem=\"cifar\""}, 128, 32},
      {"resnet18", "resnet18", {"stem=\"imagenet\""}, 32, 128},
      {"resnet50", "resnet50", {}, 16, 128},
      {"wide_resnet50_2", "wide_resnet50_2", {}, 8, 128},
      {"vgg16_bn", "vgg16_bn", {}, 8, 128},
      {"mobilenet_v2", "mobilenet_v2", {}, 32, 128},
  };
  return models;
}

// The experiment every plugtrain row runs, with only what the comparison fixes.
std::string experiment_text() {
  return std::string(R"([experiment]
name = "zoo-bench"
seed = 1
[model]
name = "resnet18"
[data]
dataset = "synthetic"
synthetic_classes = 10
)") + bench::kSgdRecipeTables;
}

struct PlugtrainRow {
  std::unique_ptr<bench::DefaultRun> run;
  std::int64_t macs = 0;  // multiply-adds per sample
};

std::unique_ptr<PlugtrainRow> build_row(const std::filesystem::path& experiment, const ZooModel& m,
                                        const std::vector<std::string>& sets) {
  const std::string side = std::to_string(m.size);
  std::vector<std::string> overrides = {"model.name=\"" + m.model + "\"",
                       "data.batch_size=" + std::to_string(m.batch),
                       "data.synthetic_shape=[3, " + side + ", " + side + "]",
                       "data.synthetic_train_size=" + std::to_string(4 * m.batch),
                       "data.synthetic_test_size=" + std::to_string(m.batch)};
  for (const std::string& o : m.options) overrides.push_back("model." + o);
  overrides.insert(overrides.end(), sets.begin(), sets.end());
  auto row = std::make_unique<PlugtrainRow>();
  row->run = bench::build_default_run(experiment, overrides);
  const RegisteredModel& model = *row->run->run.model;
  const ModelSummary summary =
      summarize_model(model, {{3, m.size, m.size}, 10}, resolve_option_assignments(model, m.options));
  row->macs = summary.macs;
  return row;
}

// The best of `repeats` runs of `work`, in seconds.
template <typename Work>
double best_seconds(int repeats, Work work) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    work();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

// What float32 matrix products reach here with these threads, in GFLOP/s, two ways: at::mm
// (BLAS: 1024 x 1024 x 1024) and a 1x1 convolution, which is a matrix product through the
// convolution library itself (oneDNN on the CPU: 64 x 32 x 32 pixels x 256 -> 256 channels,
// channels-last). The zoo's convolutions run in the latter; BLAS may be slower on some CPUs.
struct MatmulSpeed {
  double blas = 0, convolution = 0;
  double best() const { return std::max(blas, convolution); }
};

MatmulSpeed matmul_speed() {
  at::NoGradGuard no_grad;
  MatmulSpeed s;
  const at::Tensor a = at::randn({1024, 1024}), b = at::randn({1024, 1024});
  at::Tensor c = at::empty({1024, 1024});
  s.blas = 2.0 * 1024 * 1024 * 1024 / best_seconds(8, [&] { at::mm_out(c, a, b); }) / 1e9;
  const at::Tensor x = at::randn({64, 256, 32, 32}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor w = at::randn({256, 256, 1, 1}).contiguous(at::MemoryFormat::ChannelsLast);
  s.convolution = 2.0 * 64 * 32 * 32 * 256 * 256 / best_seconds(5, [&] { (void)at::conv2d(x, w); }) / 1e9;
  return s;
}

struct BenchOptions {
  int rounds = 4, warmup = 1;
  std::vector<std::string> only;
  std::vector<std::string> sets;  // --set key=value for every plugtrain row
};

BenchOptions parse(int argc, char** argv) {
  BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) o.rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc) o.warmup = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      std::stringstream list(argv[++i]);
      for (std::string name; std::getline(list, name, ',');) o.only.push_back(name);
    } else if (!std::strcmp(argv[i], "--set") && i + 1 < argc) {
      o.sets.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: zoo_bench [--rounds N] [--warmup N] [--only name,name] [--set key=value]\n");
      std::exit(2);
    }
  }
  if (o.rounds < 1 || o.warmup < 0) {
    std::fprintf(stderr, "zoo_bench: --rounds must be >= 1 and --warmup >= 0\n");
    std::exit(2);
  }
  return o;
}

int bench_models(const BenchOptions& options, const std::vector<ZooModel>& models) {
  const bench::ExperimentFile file("zoo_bench", experiment_text());
  const std::filesystem::path& experiment = file.path();

  // Built in order and destroyed in reverse (each BuiltRun puts back the process settings it
  // changed when it goes).
  std::vector<std::unique_ptr<PlugtrainRow>> ours;
  for (const ZooModel& m : models) ours.push_back(build_row(experiment, m, options.sets));
  const int threads = at::get_num_threads();
  bench::PythonPeer peer("zoo_peer.py", {"--threads", std::to_string(threads)});
  std::map<std::string, std::int64_t> their_parameters;
  for (const ZooModel& m : models) {
    const nlohmann::json a = peer.ask("add " + m.label + " " + std::to_string(m.batch) + " " + std::to_string(m.size));
    if (!a.is_null()) their_parameters[m.label] = a.at("parameters").get<std::int64_t>();
  }
  const MatmulSpeed speed = matmul_speed();
  const double gflops = speed.best();

  std::map<std::string, std::vector<double>> our_seconds, their_seconds;
  for (int round = 0; round < options.warmup + options.rounds; ++round) {
    const bool timed = round >= options.warmup;
    for (std::size_t i = 0; i < models.size(); ++i) {
      const ZooModel& m = models[i];
      const double mine = ours[i]->run->step_seconds();
      double theirs = -1;
      if (const nlohmann::json a = peer.ask("step " + m.label); !a.is_null()) theirs = a.at("seconds").get<double>();
      std::printf("%s %d %-16s plugtrain %7.1f  torchvision %7.1f samples/s\n", timed ? "round" : "warmup",
                  timed ? round - options.warmup + 1 : round + 1, m.label.c_str(), double(m.batch) / mine,
                  theirs > 0 ? double(m.batch) / theirs : 0.0);
      std::fflush(stdout);
      if (!timed) continue;
      our_seconds[m.label].push_back(mine);
      if (theirs > 0) their_seconds[m.label].push_back(theirs);
    }
  }

  std::printf("\nzoo: training samples/s, fp32, %d intra-op threads on both sides, median of %d rounds (rows "
              "alternating) after %d warm-up\nfloat32 matrix products here: %.0f GFLOP/s through BLAS, %.0f as a 1x1 "
              "convolution; the limit (lim) is %.0f GFLOP/s over 6 x the model's multiply-adds per sample\n",
              threads, options.rounds, options.warmup, speed.blas, speed.convolution, gflops);
  for (const std::string& set : options.sets) std::printf("plugtrain rows deviate from the defaults: --set %s\n", set.c_str());
  if (peer.ok() && peer.hello().contains("torch"))
    std::printf("torch %s, torchvision %s\n", peer.hello().at("torch").get<std::string>().c_str(),
                peer.hello().at("torchvision").get<std::string>().c_str());
  std::printf("\n  %-16s %5s %9s %8s %11s %11s %9s %9s %8s %8s\n", "model", "batch", "input", "GMAC", "plugtrain",
              "torchvision", "ratio", "per round", "ours/lim", "tv/lim");
  int rc = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const ZooModel& m = models[i];
    const double macs = double(ours[i]->macs);
    const double limit = gflops * 1e9 / (6.0 * macs);  // samples/s the matrix-product speed allows
    const double mine = double(m.batch) / bench::median(our_seconds[m.label]);
    const auto& theirs_steps = their_seconds[m.label];
    const std::string input = "3x" + std::to_string(m.size) + "x" + std::to_string(m.size);
    if (theirs_steps.empty()) {
      std::printf("  %-16s %5lld %9s %8.2f %11.1f %11s %9s %9s %8.2f %8s\n", m.label.c_str(), (long long)m.batch,
                  input.c_str(), macs / 1e9, mine, "skipped", "", "", mine / limit, "");
      continue;
    }
    const double theirs = double(m.batch) / bench::median(theirs_steps);
    std::vector<double> per_round;
    for (std::size_t r = 0; r < std::min(theirs_steps.size(), our_seconds[m.label].size()); ++r)
      per_round.push_back(theirs_steps[r] / our_seconds[m.label][r]);
    std::printf("  %-16s %5lld %9s %8.2f %11.1f %11.1f %9.3f %9.3f %8.2f %8.2f\n", m.label.c_str(), (long long)m.batch,
                input.c_str(), macs / 1e9, mine, theirs, mine / theirs, bench::median(per_round), mine / limit,
                theirs / limit);
  }
  std::printf("\n  parameters (plugtrain / torchvision):");
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::int64_t mine = ours[i]->run->built->parameters;
    const auto it = their_parameters.find(models[i].label);
    std::printf(" %s %s/%s", models[i].label.c_str(), with_thousands(mine).c_str(),
                it == their_parameters.end() ? "?" : with_thousands(it->second).c_str());
    if (it != their_parameters.end() && it->second != mine) {
      std::printf(" MISMATCH");
      rc = 1;
    }
  }
  std::printf("\n");
  if (!peer.ok()) std::printf("torchvision peer: skipped (%s)\n", peer.skipped().c_str());
  while (!ours.empty()) ours.pop_back();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions options = parse(argc, argv);
  std::vector<ZooModel> models;
  for (const ZooModel& m : zoo())
    if (options.only.empty() || std::find(options.only.begin(), options.only.end(), m.label) != options.only.end())
      models.push_back(m);
  if (models.empty()) {
    std::fprintf(stderr, "zoo_bench: --only names no model\n");
    return 2;
  }
  try {
    return bench_models(options, models);
  } catch (const std::exception& e) {  // a bad --set, a model that cannot be built: one line
    std::fprintf(stderr, "zoo_bench: %s\n", e.what());
    return 2;
  }
}
