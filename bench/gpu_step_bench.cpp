// Training throughput on a CUDA GPU: plugtrain's run path against PyTorch eager and
// torch.compile, in one invocation, same models and recipes (issues "GPUs for real" and 64):
//   mlp       784-256-128-10, dropout 0.1, Adam lr 1e-3, batch 100, 1x28x28
//   convnet   32/64 channels 5x5, fc 1024, dropout 0.4, Adam lr 1e-3, batch 100, 1x28x28
//   resnet18  CIFAR form, SGD 0.1 momentum 0.9 Nesterov wd 5e-4, batch 128, 3x32x32
// each in fp32 and bf16 (--precisions), and
//   gpt2      the zoo's gpt in the GPT-2-small shape (12 layers, 12 heads, width 768,
//             vocabulary 50304) at --gpt-context (1024) and --gpt-batch (8), language_model on
//             random token ids, AdamW lr 1e-3 betas (0.9, 0.99) wd 0.1 on matrices, clipping 1
//             (transformer_bench's recipe), bf16 only; tokens/s and model FLOPs utilisation
// plugtrain's rows are real runs (validate, plan, build through the plugin host, then
// Trainer::time_steps; no run folder) on synthetic data held in memory:
//   host      batches made on the host and copied (data.on_device = false, train.graphs = false)
//   device    data on the GPU, eager steps (data.on_device = true, train.graphs = false)
//   graphs    data on the GPU, every step replayed from a CUDA graph (both true)
// (gpt2: device and graphs, data.on_device = "auto"). The peer (bench/python/gpu_step_peer.py)
// is PyTorch with its data on the GPU: eager, and torch.compile(model, mode=...) for each of
// --modes (reduce-overhead: CUDA graphs too; max-autotune-no-cudagraphs), compiled before the
// rounds (their compile time is printed). --compile-budget stops starting compilations after
// that many seconds, --no-compile measures eager only, --deadline ends the rounds early. Every
// figure is samples/s over the steps of one measurement ended by one synchronisation, after
// warm-up; rows alternate round by round and the median of the rounds is printed, with
// plugtrain's graphs against each PyTorch column. Without a usable CUDA device it says why and
// exits 0. --backend cpu runs the same paths on the CPU (the peer then skips): a check of the
// bench itself, at tiny --steps.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "gpu_step_options.h"
#include "plugins/plugin_host.h"
#include "python_peer.h"
#include "run/step_bench.h"
#include "run/validate.h"
#include "token_folder.h"

namespace {

using namespace plugtrain;
namespace fs = std::filesystem;

// A row: a model in one precision; its experiment is written to the bench's folder.
struct StepRow {
  std::string model, precision;
  std::string key() const { return model + " " + precision; }
};

std::vector<StepRow> chosen_rows(const bench::GpuStepOptions& o) {
  std::vector<StepRow> rows;
  for (const char* model : {"mlp", "convnet", "resnet18", "gpt2"}) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), model) == o.only.end()) continue;
    if (std::string(model) == "gpt2")
      rows.push_back({model, "bf16"});
    else
      for (const std::string& precision : o.precisions) rows.push_back({model, precision});
  }
  return rows;
}

// Each small model's [model] and [data] lines, and its [optim] table.
std::string small_model_tables(const std::string& model) {
  const std::string synthetic = "dataset = \"synthetic\"\nsynthetic_classes = 10\nsynthetic_test_size = 100\n";
  const std::string adam = "[optim]\nname = \"adam\"\nlr = 1e-3\n";
  if (model == "mlp")
    return "[model]\nname = \"mlp\"\nhidden = [256, 128]\ndropout = 0.1\n[data]\nsynthetic_shape = [1, 28, 28]\n"
           "synthetic_train_size = 60000\nbatch_size = 100\n" +
           synthetic + adam;
  if (model == "convnet")
    return "[model]\nname = \"convnet\"\nchannels = [32, 64]\nkernel_size = 5\nhidden = 1024\ndropout = 0.4\n"
           "[data]\nsynthetic_shape = [1, 28, 28]\nsynthetic_train_size = 60000\nbatch_size = 100\n" +
           synthetic + adam;
  return "[model]\nname = \"resnet18\"\nstem = \"cifar\"\n[data]\nsynthetic_shape = [3, 32, 32]\n"
         "synthetic_train_size = 50000\nbatch_size = 128\naugmentation = [\"random_crop\", \"horizontal_flip\"]\n" +
         synthetic + "[optim]\nname = \"sgd\"\nlr = 0.1\nmomentum = 0.9\nnesterov = true\nweight_decay = 5e-4\n";
}

// A tokens folder (nanoGPT's layout: uint16 ids, meta.json) of random ids for gpt2's windows.
fs::path gpt_tokens(const fs::path& dir, const bench::GptShape& shape) {
  const fs::path folder = dir / "gpt2_tokens";
  bench::write_random_tokens(folder, shape.vocab, 64 * shape.context, 64 * shape.context);
  return folder;
}

std::string gpt_tables(const bench::GptShape& s, const fs::path& tokens, std::int64_t batch) {
  return "[model]\nname = \"gpt\"\nlayers = " + std::to_string(s.layers) + "\nheads = " + std::to_string(s.heads) +
         "\nwidth = " + std::to_string(s.width) +
         "\n[task]\nname = \"language_model\"\n[data]\ndataset = \"tokens\"\n" + "path = \"" + tokens.string() +
         "\"\nbatch_size = " + std::to_string(batch) + "\n[dataset]\ncontext = " + std::to_string(s.context) +
         "\n[optim]\nname = \"adamw\"\nlr = 1e-3\nbetas = [0.9, 0.99]\n" + "weight_decay = 0.1\ndecay = \"matrices\"\n";
}

fs::path write_experiment(const fs::path& dir, const StepRow& row, const std::string& tables) {
  const fs::path file = dir / (row.model + "_" + row.precision + ".toml");
  std::ofstream(file) << "[experiment]\nname = \"bench\"\nseed = 1\n"
                      << tables << "[train]\nlog_interval = 0\n"
                      << (row.model == "gpt2" ? "grad_clip = 1.0\n" : "") << "precision = \"" << row.precision
                      << "\"\n";
  return file;
}

struct Mode {
  std::string name, on_device, graphs;
};
const std::vector<Mode> kSmallModelModes{
    {"host", "false", "false"}, {"device", "true", "false"}, {"graphs", "true", "true"}};
const std::vector<Mode> kGptModes{{"device", "\"auto\"", "false"}, {"graphs", "\"auto\"", "true"}};

using Figures = std::map<std::string, std::map<std::string, std::vector<double>>>;  // [row][column]

double median_of(Figures& f, const std::string& row, const std::string& column) {
  const std::vector<double>& v = f[row][column];
  return v.empty() ? 0.0 : bench::median(v);
}

std::string ratio(double ours, double theirs) {
  if (ours <= 0 || theirs <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", ours / theirs);
  return text;
}

using Clock = std::chrono::steady_clock;

// The peer's short column names.
std::string column_of(const std::string& mode) {
  if (mode == "reduce-overhead") return "compile-ro";
  if (mode == "max-autotune-no-cudagraphs") return "compile-ma";
  return mode;
}

// Why the peer's answer `a` holds no number `key`: its {"failed": reason}, or the answer itself
// (that column is then left out, not the whole bench); empty when it holds one.
std::string failure_in(const nlohmann::json& a, const char* key) {
  if (a.contains("failed") && a.at("failed").is_string()) return a.at("failed").get<std::string>();
  if (a.contains(key) && a.at(key).is_number()) return {};
  return "the peer answered " + a.dump().substr(0, 200) + " (no number \"" + key + "\")";
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Builds (and compiles) every peer run before the rounds: eager ones first, then each compile
// mode, within --compile-budget (seconds since `start`, the bench's). gpt2 comes first in the
// first compile mode (the figure) and last in the others (max-autotune compiles it for
// minutes). `why_not[row|column]`: a column not measured for a row, and why.
void prepare_peer(bench::PythonPeer& peer, const std::vector<StepRow>& rows, const bench::GpuStepOptions& o,
                  Clock::time_point start, std::map<std::string, std::string>& why_not) {
  std::vector<std::string> modes{"eager"};
  modes.insert(modes.end(), o.compile_modes.begin(), o.compile_modes.end());
  for (std::size_t m = 0; m < modes.size(); ++m) {
    const std::string& mode = modes[m];
    std::vector<StepRow> order;
    for (const StepRow& r : rows)
      if ((r.model == "gpt2") == (m <= 1)) order.push_back(r);
    for (const StepRow& r : rows)
      if ((r.model == "gpt2") != (m <= 1)) order.push_back(r);
    for (const StepRow& r : order) {
      const std::string at = r.key() + "|" + column_of(mode);
      if (mode != "eager" && o.compile_budget_s > 0 && seconds_since(start) > o.compile_budget_s) {
        why_not[at] = "not compiled: --compile-budget " + std::to_string(int(o.compile_budget_s)) + " s spent";
        continue;
      }
      const nlohmann::json a = peer.ask("prepare " + r.model + " " + r.precision + " " + mode);
      if (a.is_null()) return;  // the peer is gone: skipped() says why
      if (const std::string why = failure_in(a, "prepare_seconds"); !why.empty()) {
        why_not[at] = why;
        continue;
      }
      const double seconds = a.at("prepare_seconds").get<double>();
      std::printf("peer: %s %s ready in %.1f s\n", r.key().c_str(), mode.c_str(), seconds);
      std::fflush(stdout);
    }
  }
}

void measure_round(int round, const std::vector<StepRow>& rows, const std::map<std::string, fs::path>& files,
                   const bench::GpuStepOptions& o, bench::PythonPeer& peer, Figures& f,
                   std::map<std::string, std::string>& why_not) {
  for (const StepRow& r : rows) {
    const bool gpt = r.model == "gpt2";
    BenchSettings settings;
    settings.warmup_steps = gpt ? 8 : 20;  // the graphs replay from step 5 on
    settings.steps = gpt ? o.gpt_steps : o.steps;
    settings.synchronise_each_step = false;
    std::printf("round %d %-14s", round + 1, r.key().c_str());
    for (const Mode& mode : gpt ? kGptModes : kSmallModelModes) {
      if (mode.name == "host" && !o.host_side) continue;
      RunRequest request;
      request.experiment_file = files.at(r.key());
      request.overrides = {"data.on_device=" + mode.on_device, "train.graphs=" + mode.graphs};
      const BenchRow row = bench_backend(validate(request), o.backend, 0, settings);
      if (!row.error.empty()) {
        why_not[r.key() + "|" + mode.name] = row.error;
        continue;
      }
      f[r.key()][mode.name].push_back(row.samples_per_second);
      std::printf(" %s %.0f", mode.name.c_str(), row.samples_per_second);
    }
    std::vector<std::string> modes{"eager"};
    modes.insert(modes.end(), o.compile_modes.begin(), o.compile_modes.end());
    for (const std::string& mode : modes) {
      const std::string at = r.key() + "|" + column_of(mode);
      if (why_not.count(at)) continue;
      const nlohmann::json a =
          peer.ask("time " + r.model + " " + r.precision + " " + std::to_string(settings.steps) + " " + mode);
      if (a.is_null()) break;
      if (const std::string why = failure_in(a, "samples_per_second"); !why.empty()) {
        why_not[at] = why;
        continue;
      }
      const double samples_per_second = a.at("samples_per_second").get<double>();
      f[r.key()][column_of(mode)].push_back(samples_per_second);
      std::printf(" %s %.0f", column_of(mode).c_str(), samples_per_second);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
}

void print_tables(const std::vector<StepRow>& rows, const bench::GpuStepOptions& o, int rounds, Figures& f,
                  const std::string& device, const bench::GptShape& gpt) {
  std::vector<std::string> peer{"eager"};
  for (const std::string& m : o.compile_modes) peer.push_back(column_of(m));
  std::printf("\nsamples/s, median of %d rounds (gpt2: sequences of %lld tokens)\n%-14s %10s %10s %10s", rounds,
              static_cast<long long>(gpt.context), "model", "host", "device", "graphs");
  for (const std::string& c : peer) std::printf(" %10s", c.c_str());
  for (const std::string& c : peer)
    std::printf(" %9s", ("x " + (c == "eager" ? c : c.substr(c.find('-') + 1))).c_str());
  std::printf("   (x: graphs against that column)\n");
  for (const StepRow& r : rows) {
    const double graphs = median_of(f, r.key(), "graphs");
    std::printf("%-14s %10.0f %10.0f %10.0f", r.key().c_str(), median_of(f, r.key(), "host"),
                median_of(f, r.key(), "device"), graphs);
    for (const std::string& c : peer) std::printf(" %10.0f", median_of(f, r.key(), c));
    for (const std::string& c : peer) std::printf(" %9s", ratio(graphs, median_of(f, r.key(), c)).c_str());
    std::printf("\n");
  }
  if (std::find_if(rows.begin(), rows.end(), [](const StepRow& r) { return r.model == "gpt2"; }) == rows.end()) return;
  const std::optional<double> peak =
      o.peak_tflops > 0 ? std::optional<double>(o.peak_tflops) : bench::bf16_peak_tflops(device);
  char peak_text[64] = "unknown (--peak-tflops X)";
  if (peak)
    std::snprintf(peak_text, sizeof peak_text, "%.0f TFLOPS dense bf16%s", *peak,
                  o.peak_tflops > 0 ? " (--peak-tflops)" : "");
  std::printf(
      "\ngpt2 bf16 (GPT-2-small shape, context %lld, batch %lld): %.1f M parameters without the position "
      "embedding, %.3f GFLOP per token (6N + 12LHQT); peak %s\n%-20s %12s %8s\n",
      static_cast<long long>(gpt.context), static_cast<long long>(o.gpt_batch), gpt.parameters() / 1e6,
      gpt.flops_per_token() / 1e9, peak_text, "side", "tokens/s", "MFU");
  std::vector<std::string> sides{"device", "graphs"};
  sides.insert(sides.end(), peer.begin(), peer.end());
  for (const std::string& side : sides) {
    const double tokens = median_of(f, "gpt2 bf16", side) * double(gpt.context);
    char mfu[32] = "-";
    if (tokens > 0 && peak)
      std::snprintf(mfu, sizeof mfu, "%.1f%%", 100 * tokens * gpt.flops_per_token() / (*peak * 1e12));
    else if (tokens > 0)
      std::snprintf(mfu, sizeof mfu, "unknown");
    const bool ours = side == "device" || side == "graphs";
    std::printf("%-20s %12.0f %8s\n", ((ours ? "plugtrain " : "pytorch ") + side).c_str(), tokens, mfu);
  }
}

int run_gpu_step_bench(const bench::GpuStepOptions& o, const std::string& device) {
  const Clock::time_point start = Clock::now();
  const fs::path dir = fs::temp_directory_path() / "plugtrain_gpu_step_bench";
  fs::create_directories(dir);
  bench::GptShape gpt;
  gpt.context = o.gpt_context;
  const std::vector<StepRow> rows = chosen_rows(o);
  std::map<std::string, fs::path> files;
  for (const StepRow& r : rows)
    files[r.key()] = write_experiment(
        dir, r, r.model == "gpt2" ? gpt_tables(gpt, gpt_tokens(dir, gpt), o.gpt_batch) : small_model_tables(r.model));
  bench::PythonPeer peer("gpu_step_peer.py",
                         {"--twins", PLUGTRAIN_TWINS_DIR, "--gpt-context", std::to_string(o.gpt_context), "--gpt-batch",
                          std::to_string(o.gpt_batch)});
  std::printf("device: %s; python peer: %s\n", device.c_str(),
              peer.ok() ? peer.hello().dump().c_str() : ("skipped (" + peer.skipped() + ")").c_str());
  std::fflush(stdout);
  std::map<std::string, std::string> why_not;
  if (peer.ok()) prepare_peer(peer, rows, o, start, why_not);
  Figures figures;
  int rounds = 0;
  for (double last = 0; rounds < o.rounds; ++rounds) {
    if (rounds > 0 && o.deadline_s > 0 && seconds_since(start) + last > o.deadline_s) break;
    const Clock::time_point round_start = Clock::now();
    measure_round(rounds, rows, files, o, peer, figures, why_not);
    last = seconds_since(round_start);
  }
  print_tables(rows, o, rounds, figures, device, gpt);
  for (const auto& [at, why] : why_not) std::printf("not measured: %s: %s\n", at.c_str(), why.c_str());
  if (!peer.ok()) std::printf("python peer: skipped (%s)\n", peer.skipped().c_str());
  fs::remove_all(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bench::GpuStepOptions o;
  try {
    o = bench::parse_gpu_step_options(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_step_bench: %s\n%s\n", e.what(), bench::kGpuStepUsage);
    return 2;
  }
  PluginHost host{SearchOptions{}};
  BackendHandle* backend = host.backend(o.backend);
  if (!backend) {
    std::printf("gpu_step_bench: skipped (no %s backend plugin was built)\n", o.backend.c_str());
    return 0;
  }
  if (!backend->probe().usable()) {
    std::printf("gpu_step_bench: skipped (%s: %s)\n", o.backend.c_str(), backend->probe().message.c_str());
    return 0;
  }
  try {
    return run_gpu_step_bench(o, backend->probe().devices.at(0).name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_step_bench: %s\n", e.what());
    return 1;
  }
}
