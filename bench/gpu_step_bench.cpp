// Training throughput on a CUDA GPU: plugtrain's run path against PyTorch eager, in one
// invocation, same models and recipes (the issue "GPUs for real" and its targets):
//   mlp       784-256-128-10, dropout 0.1, Adam lr 1e-3, batch 100, 1x28x28
//   convnet   32/64 channels 5x5, fc 1024, dropout 0.4, Adam lr 1e-3, batch 100, 1x28x28
//   resnet18  CIFAR form, SGD 0.1 momentum 0.9 Nesterov wd 5e-4, batch 128, 3x32x32
// each in fp32 and bf16. plugtrain's rows are real runs (validate, plan, build through the
// plugin host, then Trainer::time_steps; no run folder) on synthetic data held in memory:
//   host      batches made on the host and copied (data.on_device = false, train.graphs = false)
//   device    data on the GPU, eager steps (data.on_device = true, train.graphs = false)
//   graphs    data on the GPU, every step replayed from a CUDA graph (both true)
// and the peer (bench/python/gpu_step_peer.py) is PyTorch eager with its data on the GPU.
// Every figure is samples/s over `kSteps` steps ended by one synchronisation, after warm-up;
// rows alternate round by round and the median of the rounds is printed, with the ratio
// graphs / PyTorch. Without a usable CUDA device it says why and exits 0.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "plugins/plugin_host.h"
#include "python_peer.h"
#include "run/step_bench.h"
#include "run/validate.h"

namespace {

using namespace plugtrain;
namespace fs = std::filesystem;

constexpr int kRounds = 3;
constexpr std::int64_t kSteps = 200;

// Each model's [model] and [data] lines, and its [optim] table: the bench adds the synthetic
// data set's keys to [data] between them.
struct BenchModel {
  std::string name, model_and_data, optim;
};

const std::vector<BenchModel>& models() {
  static const std::vector<BenchModel> m{
      {"mlp", "[model]\nname = \"mlp\"\nhidden = [256, 128]\ndropout = 0.1\n[data]\nsynthetic_shape = [1, 28, 28]\n"
              "synthetic_train_size = 60000\nbatch_size = 100\n",
       "[optim]\nname = \"adam\"\nlr = 1e-3\n"},
      {"convnet", "[model]\nname = \"convnet\"\nchannels = [32, 64]\nkernel_size = 5\nhidden = 1024\ndropout = 0.4\n"
                  "[data]\nsynthetic_shape = [1, 28, 28]\nsynthetic_train_size = 60000\nbatch_size = 100\n",
       "[optim]\nname = \"adam\"\nlr = 1e-3\n"},
      {"resnet18", "[model]\nname = \"resnet18\"\nstem = \"cifar\"\n[data]\nsynthetic_shape = [3, 32, 32]\n"
                   "synthetic_train_size = 50000\nbatch_size = 128\naugmentation = [\"random_crop\", "
                   "\"horizontal_flip\"]\n",
       "[optim]\nname = \"sgd\"\nlr = 0.1\nmomentum = 0.9\nnesterov = true\nweight_decay = 5e-4\n"},
  };
  return m;
}

struct Mode {
  std::string name, on_device, graphs;
};
const std::vector<Mode> kModes{{"host", "false", "false"}, {"device", "true", "false"}, {"graphs", "true", "true"}};

}  // namespace

int main() {
  PluginHost host{SearchOptions{}};
  BackendHandle* cuda = host.backend("cuda");
  if (!cuda) {
    std::printf("gpu_step_bench: skipped (no cuda backend plugin was built)\n");
    return 0;
  }
  if (!cuda->probe().usable()) {
    std::printf("gpu_step_bench: skipped (cuda: %s)\n", cuda->probe().message.c_str());
    return 0;
  }
  const fs::path dir = fs::temp_directory_path() / "plugtrain_gpu_step_bench";
  fs::create_directories(dir);
  bench::PythonPeer peer("gpu_step_peer.py", {});
  std::printf("device: %s; python peer: %s\n", cuda->probe().devices.at(0).name.c_str(),
              peer.ok() ? peer.hello().dump().c_str() : ("skipped (" + peer.skipped() + ")").c_str());

  // figures[model precision][row] = samples/s per round
  std::map<std::string, std::map<std::string, std::vector<double>>> figures;
  BenchSettings settings;
  settings.warmup_steps = 20;
  settings.steps = kSteps;
  settings.synchronise_each_step = false;
  for (int round = 0; round < kRounds; ++round) {
    for (const BenchModel& model : models()) {
      for (const char* precision : {"fp32", "bf16"}) {
        const std::string key = model.name + " " + precision;
        const fs::path file = dir / (model.name + ".toml");
        std::ofstream(file) << "[experiment]\nname = \"bench\"\nseed = 1\n" << model.model_and_data
                            << "dataset = \"synthetic\"\nsynthetic_classes = 10\nsynthetic_test_size = 100\n"
                            << model.optim
                            << "[train]\nlog_interval = 0\nprecision = \"" << precision << "\"\n";
        for (const Mode& mode : kModes) {
          RunRequest request;
          request.experiment_file = file;
          request.overrides = {"data.on_device=" + mode.on_device, "train.graphs=" + mode.graphs};
          const BenchRow row = bench_backend(validate(request), "cuda", 0, settings);
          if (!row.error.empty()) {
            std::printf("%s %s: %s\n", key.c_str(), mode.name.c_str(), row.error.c_str());
            continue;
          }
          figures[key][mode.name].push_back(row.samples_per_second);
        }
        if (const nlohmann::json a = peer.ask("time " + model.name + " " + precision + " " + std::to_string(kSteps));
            a.is_object())
          figures[key]["pytorch"].push_back(a["samples_per_second"].get<double>());
      }
    }
  }
  std::printf("\nsamples/s, median of %d rounds of %lld steps\n%-18s %12s %12s %12s %12s %10s\n", kRounds,
              static_cast<long long>(kSteps), "model precision", "host", "device", "graphs", "pytorch", "graphs/py");
  for (const BenchModel& model : models()) {
    for (const char* precision : {"fp32", "bf16"}) {
      const std::string key = model.name + " " + precision;
      auto& f = figures[key];
      auto value = [&](const char* row) { return f[row].empty() ? 0.0 : bench::median(f[row]); };
      const double py = value("pytorch");
      std::printf("%-18s %12.0f %12.0f %12.0f %12.0f %10s\n", key.c_str(), value("host"), value("device"),
                  value("graphs"), py, py > 0 ? (std::to_string(value("graphs") / py).substr(0, 4) + "x").c_str() : "-");
    }
  }
  fs::remove_all(dir);
  return 0;
}
