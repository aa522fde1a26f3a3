// The zoo's transformers against PyTorch on the CPU: training tokens/s (GPT) and samples/s (ViT),
// plugtrain's side as `plugtrain run` trains it, PyTorch's as its users write it, eager and under
// torch.compile, in one invocation with rows alternating.
//
//   plugtrain  an experiment validated, planned and built by the run's own stages (task
//              language_model on a tokens folder of random ids, or fashion-mnist-shaped synthetic
//              images), AdamW lr 1e-3 betas (0.9, 0.99) weight decay 0.1 on matrices only
//              (optim.decay = "matrices"), gradient clipping 1, fp32; a step is the batch,
//              forward, backward, clipping and optimizer, from a StepTimer kept for the whole
//              bench (DefaultRun::step_seconds), so every round's steps are warm.
//   PyTorch    bench/python/transformer_peer.py: the twins of python/transformer_twins.py
//              (nanoGPT's GPT, the ViT) with torch.optim.AdamW in the same two groups,
//              clip_grad_norm_, eager; and the same under torch.compile (compiled in warm-up).
// Rows: nanoGPT's CPU configuration of shakespeare_char (4 layers, 4 heads, width 128, context
// 64, batch 12, 65 characters), a GPT-2-small shape (12 layers, 12 heads, width 768, vocabulary
// 50304) at context 128 and batch 4, and a ViT on 28 x 28 images (patch 4, width 128, depth 6,
// heads 4, batch 64).
//
// --unfused adds a third side, the same experiment with model.fused = false (ATen's ops one by one
// instead of plugins/models/fused_ops.h, the default), timed in the same rounds. --steps N (3):
// each side trains N steps in a row per round, and its figure for the round is their mean, after
// --settle N (1) untimed: the first step after another model's runs with the caches full of that
// model (15-30% slower for the GPT here), which a run, training one model, never sees. The sides
// also take turns at each seat of a row (run_bench).
//
//   transformer_bench [--rounds N] [--warmup N] [--steps N] [--settle N] [--only label,label] [--no-compile]
//                     [--unfused]
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "default_run.h"
#include "python_peer.h"
#include "token_folder.h"

namespace {

using namespace plugtrain;

struct Row {
  std::string label, kind;     // kind: gpt or vit
  std::vector<std::int64_t> n;  // gpt: vocab, context, layers, heads, width, batch; vit: patch, width, depth, heads, batch
  std::int64_t batch() const { return n.back(); }
  std::int64_t per_sample() const { return kind == "gpt" ? n[1] : 1; }  // tokens per sample (gpt), 1 (vit)
};

const std::vector<Row>& rows() {
  static const std::vector<Row> all{{"gpt_nanogpt_cpu", "gpt", {65, 64, 4, 4, 128, 12}},
                                    {"gpt2_small_shape", "gpt", {50304, 128, 12, 12, 768, 4}},
                                    {"vit_fashion", "vit", {4, 128, 6, 4, 64}}};
  return all;
}

// A tokens folder of random ids (nanoGPT's layout) big enough for the row's windows.
std::filesystem::path token_folder(const Row& r) {
  const auto folder = std::filesystem::temp_directory_path() / ("transformer_bench_" + std::to_string(::getpid()) + "_" + r.label);
  bench::write_random_tokens(folder, r.n[0], 64 * r.n[1], 64 * r.n[1]);
  return folder;
}

std::string experiment_text(const Row& r, const std::filesystem::path& tokens, bool unfused = false) {
  std::string t = "[experiment]\nname = \"transformer-bench\"\nseed = 1\n[backend]\nname = \"cpu\"\n";
  const std::string model = std::string("[model]\n") + (unfused ? "fused = false\n" : "");
  if (r.kind == "gpt") {
    t += model + "name = \"gpt\"\nlayers = " + std::to_string(r.n[2]) + "\nheads = " + std::to_string(r.n[3]) +
         "\nwidth = " + std::to_string(r.n[4]) +
         "\n[task]\nname = \"language_model\"\n[data]\ndataset = \"tokens\"\n"
         "path = \"" +
         tokens.string() + "\"\nbatch_size = " + std::to_string(r.batch()) +
         "\n[dataset]\ncontext = " + std::to_string(r.n[1]) + "\n";
  } else {
    t += model + "name = \"vit\"\npatch = " + std::to_string(r.n[0]) + "\nwidth = " + std::to_string(r.n[1]) +
         "\ndepth = " + std::to_string(r.n[2]) + "\nheads = " + std::to_string(r.n[3]) +
         "\n[data]\ndataset = \"synthetic\"\nsynthetic_shape = [1, 28, 28]\nsynthetic_train_size = 1024\n"
         "synthetic_test_size = 64\nbatch_size = " +
         std::to_string(r.batch()) + "\n";
  }
  return t + "[optim]\nname = \"adamw\"\nlr = 1e-3\nbetas = [0.9, 0.99]\nweight_decay = 0.1\ndecay = \"matrices\"\n"
         "[train]\nepochs = 1\nlog_interval = 0\ngrad_clip = 1.0\n";
}

struct BenchOptions {
  int rounds = 5, warmup = 2, steps = 3, settle = 1;
  bool compile = true, unfused = false;
  std::vector<std::string> only;
};

BenchOptions parse(int argc, char** argv) {
  BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) o.rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc) o.warmup = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      o.steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--settle") && i + 1 < argc)
      o.settle = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-compile")) o.compile = false;
    else if (!std::strcmp(argv[i], "--unfused"))
      o.unfused = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      std::stringstream list(argv[++i]);
      for (std::string name; std::getline(list, name, ',');) o.only.push_back(name);
    } else {
      std::fprintf(stderr,
                   "usage: transformer_bench [--rounds N] [--warmup N] [--steps N] [--settle N] [--only label,label] "
                   "[--no-compile] [--unfused]\n");
      std::exit(2);
    }
  }
  if (o.rounds < 1 || o.warmup < 0 || o.steps < 1 || o.settle < 0) {
    std::fprintf(stderr, "transformer_bench: --rounds and --steps must be >= 1, --warmup and --settle >= 0\n");
    std::exit(2);
  }
  return o;
}

std::string add_command(const Row& r, const std::string& mode) {
  std::string c = "add " + r.label + "_" + mode + " " + mode + " " + r.kind;
  for (std::int64_t v : r.n) c += " " + std::to_string(v);
  return c;
}

// Seconds of one step of each side (a round's mean), by side ("plugtrain", "unfused", "eager", "compile").
using Times = std::map<std::string, std::vector<double>>;

void print_table(const std::vector<Row>& chosen, std::map<std::string, Times>& times, bool compile) {
  std::printf("\n  %-18s %6s %10s %10s %10s %10s %8s %9s %9s %10s %9s\n", "row", "batch", "plugtrain", "unfused",
              "eager", "compile", "x eager", "x compile", "x unfused", "paired: x eager", "x compile");
  for (const Row& r : chosen) {
    Times& t = times[r.label];
    const double units = double(r.batch() * r.per_sample());
    const auto rate = [&](const std::string& side) {
      return t[side].empty() ? 0.0 : units / bench::median(t[side]);
    };
    const double ours = rate("plugtrain"), unfused = rate("unfused"), eager = rate("eager");
    const double compiled = compile ? rate("compile") : 0.0;
    std::printf("  %-18s %6lld %10.0f %10.0f %10.0f %10.0f %8.2f %9.2f %9.2f %15.2f %9.2f\n", r.label.c_str(),
                (long long)r.batch(), ours, unfused, eager, compiled, eager > 0 ? ours / eager : 0.0,
                compiled > 0 ? ours / compiled : 0.0, unfused > 0 ? ours / unfused : 0.0,
                bench::paired_speedup(t["plugtrain"], t["eager"]), bench::paired_speedup(t["plugtrain"], t["compile"]));
  }
  std::printf(
      "  (gpt rows: tokens/s; vit: samples/s; 0: that side skipped; x: ratios of the medians; paired: the\n"
      "   median of each round's ratio, which a machine whose speed drifts during the run moves less)\n");
}

int run_bench(const BenchOptions& o, const std::vector<Row>& chosen) {
  std::vector<std::unique_ptr<bench::ExperimentFile>> files;
  std::vector<std::unique_ptr<bench::DefaultRun>> ours, unfused;
  std::vector<std::filesystem::path> folders;
  for (const Row& r : chosen) {
    folders.push_back(r.kind == "gpt" ? token_folder(r) : std::filesystem::path());
    files.push_back(
        std::make_unique<bench::ExperimentFile>("transformer_bench_" + r.label, experiment_text(r, folders.back())));
    ours.push_back(bench::build_default_run(files.back()->path(), {}));
    if (!o.unfused) continue;
    files.push_back(std::make_unique<bench::ExperimentFile>("transformer_bench_" + r.label + "_unfused",
                                                            experiment_text(r, folders.back(), true)));
    unfused.push_back(bench::build_default_run(files.back()->path(), {}));
  }
  const int threads = at::get_num_threads();
  bench::PythonPeer peer("transformer_peer.py", {"--threads", std::to_string(threads), "--twins", PLUGTRAIN_TWINS_DIR});
  std::vector<std::string> modes = {"eager"};
  if (o.compile) modes.push_back("compile");
  for (std::size_t i = 0; i < chosen.size(); ++i)
    for (const std::string& mode : modes) {
      const nlohmann::json a = peer.ask(add_command(chosen[i], mode));
      if (!a.is_null() && mode == "eager")
        std::printf("%s: parameters plugtrain %lld, PyTorch %lld\n", chosen[i].label.c_str(),
                    (long long)ours[i]->built->parameters, (long long)a.at("parameters").get<std::int64_t>());
    }
  std::map<std::string, Times> times;
  for (int round = 0; round < o.warmup + o.rounds; ++round) {
    const bool timed = round >= o.warmup;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      const Row& r = chosen[i];
      std::printf("%s %d %-18s", timed ? "round" : "warmup", round + 1, r.label.c_str());
      // Every side takes every seat in turn (the order rotates each round): the first seat of a
      // row comes right after another row's steps, which leave the caches full of another model,
      // and the seat right after the Python peer's runs slower while its threads wake.
      std::vector<std::string> sides{"plugtrain"};
      if (o.unfused) sides.push_back("unfused");
      sides.insert(sides.end(), modes.begin(), modes.end());
      std::rotate(sides.begin(), sides.begin() + std::ptrdiff_t(std::size_t(round) % sides.size()), sides.end());
      for (const std::string& side : sides) {
        double seconds = 0;
        if (side == "plugtrain" || side == "unfused") {
          seconds = (side == "plugtrain" ? ours : unfused)[i]->step_seconds(o.steps, o.settle);
        } else {
          const nlohmann::json a =
              peer.ask("step " + r.label + "_" + side + " " + std::to_string(o.steps) + " " + std::to_string(o.settle));
          if (a.is_null()) continue;
          seconds = a.at("seconds").get<double>();
        }
        if (timed) times[r.label][side].push_back(seconds);
        std::printf("  %s %.4f s", side.c_str(), seconds);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  std::printf(
      "\ntransformers: training throughput, fp32, %d intra-op threads on both sides, median of %d rounds "
      "(rows alternating, seats rotating; a round's figure: the mean of %d steps in a row after %d untimed) "
      "after %d warm-up\n",
      threads, o.rounds, o.steps, o.settle, o.warmup);
  if (peer.ok() && peer.hello().contains("torch"))
    std::printf("torch %s\n", peer.hello().at("torch").get<std::string>().c_str());
  print_table(chosen, times, o.compile);
  if (!peer.ok()) std::printf("PyTorch peer: skipped (%s)\n", peer.skipped().c_str());
  while (!ours.empty()) ours.pop_back();
  while (!unfused.empty()) unfused.pop_back();
  for (const auto& folder : folders)
    if (!folder.empty()) std::filesystem::remove_all(folder);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions o = parse(argc, argv);
  std::vector<Row> chosen;
  for (const Row& r : rows())
    if (o.only.empty() || std::find(o.only.begin(), o.only.end(), r.label) != o.only.end()) chosen.push_back(r);
  if (chosen.empty()) {
    std::fprintf(stderr, "transformer_bench: --only names no row\n");
    return 2;
  }
  try {
    return run_bench(o, chosen);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transformer_bench: %s\n", e.what());
    return 2;
  }
}
