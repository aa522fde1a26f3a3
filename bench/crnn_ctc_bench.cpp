// Training throughput of the CRNN + CTC sequence model: plugtrain's run path against PyTorch
// eager, in one invocation, same model, loss, optimizer and batch. The recipe is
// examples/fashion_mnist_strips_crnn.toml's on synthetic strips: model crnn (channels [32, 64],
// hidden 128: 613,611 parameters with 11 outputs a step), [task] sequence (CTC, blank the last
// output, reduction mean, zero_infinity), Adam lr 2e-3, batch 32, fp32, data synthetic 1x28x112
// (strips of 1 to 4 28x28 items of 10 classes, targets padded with -1; 28 time steps).
// plugtrain's row is a real run (validate, plan, build through the plugin host, then
// Trainer::time_steps; no run folder), every other setting the default (channels-last, fused
// Adam where the device has it, batches made by its loader from the data held in memory); the
// peer (bench/python/crnn_ctc_peer.py) is the same CRNN and loss in PyTorch eager, channels_last,
// PyTorch's default Adam, slices of synthetic data held in memory on the device, the same
// number of intra-op threads. Every figure is samples/s over a row's steps ended by one
// synchronisation, after warm-up; on the CPU always and on CUDA where the cuda backend plugin
// was built and its probe finds a usable device. Rows alternate round by round (ours, the
// peer's, ours, ...); the median of the rounds is printed with the ratio plugtrain / PyTorch.
// Exits 1 when the peer's parameter count is not plugtrain's crnn's.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "default_run.h"
#include "plugins/model_forward.h"
#include "plugins/plugin_host.h"
#include "python_peer.h"
#include "run/build.h"
#include "run/step_bench.h"

namespace {

using namespace plugtrain;
namespace fs = std::filesystem;

constexpr int kRounds = 3;
constexpr std::int64_t kBatch = 32;
constexpr std::int64_t kCrnnParameters = 613'611;  // by hand from plugins/models/crnn.cpp, below

// The example's recipe on synthetic strips (experiment file text).
const char* const kExperiment = R"([experiment]
name = "crnn-ctc-bench"
seed = 1
[model]
name = "crnn"
channels = [32, 64]
hidden = 128
[task]
name = "sequence"
[data]
dataset = "synthetic"
synthetic_shape = [1, 28, 112]
synthetic_classes = 10
synthetic_train_size = 2048
synthetic_test_size = 32
batch_size = 32
[optim]
name = "adam"
lr = 2e-3
[train]
log_interval = 0
)";

// convs 1*32*9 + 32*64*9, norms 2*(32 + 64), LSTM over 64 x 7 = 448 features, 128 a direction:
// 2 * (4*128*448 + 4*128*128 + 2*4*128), fc 256 * 11 + 11.
static_assert(288 + 18432 + 192 + 2 * (229376 + 65536 + 1024) + 2827 == kCrnnParameters);

// The parameters of the models plugin's crnn as the run builds it (0 without the plugin).
std::int64_t plugtrain_parameters(PluginHost& host) {
  const RegisteredModel* m = host.models().find("crnn");
  if (!m) return 0;
  std::map<std::string, OptionValue> values;
  for (const auto& o : m->spec.options) values[o.name] = o.default_value;
  values["channels"] = std::vector<std::int64_t>{32, 64};
  values["hidden"] = std::int64_t{128};
  std::int64_t n = 0;
  for (const auto& p : build_image_model(*m, {1, 28, 112}, 11, Options(values))->parameters()) n += p.numel();
  return n;
}

}  // namespace

int main() {
  PluginHost host{SearchOptions{}};
  struct Device {
    std::string backend;
    std::int64_t steps, warmup;
  };  // a CPU step: ~0.1 s on 2 idle cores: 3 rounds of 2 x ~65 steps, about a minute
  std::vector<Device> devices{{"cpu", 60, 5}};
  if (BackendHandle* cuda = host.backend("cuda"); !cuda)
    std::printf("cuda: skipped (no cuda backend plugin was built)\n");
  else if (!cuda->probe().usable())
    std::printf("cuda: skipped (%s)\n", cuda->probe().message.c_str());
  else
    devices.push_back({"cuda", 200, 20});

  const bench::ExperimentFile experiment("crnn_ctc_bench", kExperiment);
  const fs::path& file = experiment.path();
  bench::PythonPeer peer("crnn_ctc_peer.py", {"--threads", std::to_string(at::get_num_threads()), "--batch",
                                              std::to_string(kBatch)});
  std::printf("%d intra-op threads; python peer: %s\n", at::get_num_threads(),
              peer.ok() ? peer.hello().dump().c_str() : ("skipped (" + peer.skipped() + ")").c_str());
  auto peer_has = [&](const std::string& device) {  // the peer says which of cpu and cuda it has
    if (!peer.ok() || !peer.hello().contains("devices")) return false;
    const nlohmann::json& d = peer.hello()["devices"];
    return std::find(d.begin(), d.end(), device) != d.end();
  };

  RunRequest request;
  request.experiment_file = file;
  const ValidatedRun run = validate(request);  // once: every row times trial steps of it, on data read once
  std::map<std::string, std::map<std::string, std::vector<double>>> figures;  // [device][side]
  for (int round = 0; round < kRounds; ++round) {
    for (const Device& device : devices) {
      BenchSettings settings;
      settings.warmup_steps = device.warmup;
      settings.steps = device.steps;
      settings.synchronise_each_step = false;
      const BenchRow row = bench_backend(run, device.backend, 0, settings);
      if (!row.error.empty())
        std::printf("%s plugtrain: %s\n", device.backend.c_str(), row.error.c_str());
      else
        figures[device.backend]["plugtrain"].push_back(row.samples_per_second);
      if (!peer_has(device.backend)) continue;
      if (const nlohmann::json a = peer.ask("time " + device.backend + " " + std::to_string(device.steps)); a.is_object())
        figures[device.backend]["pytorch"].push_back(a.at("samples_per_second").get<double>());
    }
  }

  std::printf("\nCRNN + CTC, batch %lld of 1x28x112, Adam, fp32: samples/s, median of %d rounds\n%-8s %7s %12s %12s %12s\n",
              static_cast<long long>(kBatch), kRounds, "device", "steps", "plugtrain", "pytorch", "plugtrain/py");
  for (const Device& device : devices) {
    auto& f = figures[device.backend];
    auto value = [&](const char* side) { return f[side].empty() ? 0.0 : bench::median(f[side]); };
    const double ours = value("plugtrain"), py = value("pytorch");
    std::printf("%-8s %7lld %12.1f %12.1f %12s\n", device.backend.c_str(), static_cast<long long>(device.steps), ours,
                py, py > 0 && ours > 0 ? (std::to_string(ours / py).substr(0, 4) + "x").c_str() : "-");
  }

  int rc = 0;
  const std::int64_t ours = plugtrain_parameters(host);
  std::printf("\nparameters: plugtrain crnn %lld (by hand %lld)", static_cast<long long>(ours),
              static_cast<long long>(kCrnnParameters));
  if (peer.ok()) {
    const std::int64_t theirs = peer.hello().at("parameters").get<std::int64_t>();
    std::printf(", PyTorch %lld", static_cast<long long>(theirs));
    if (theirs != ours) rc = 1;
  } else {
    std::printf("; python peer: skipped (%s)", peer.skipped().c_str());
  }
  if (ours != kCrnnParameters) rc = 1;
  std::printf("%s\n", rc ? "  MISMATCH" : "  (equal)");
  return rc;
}
