// Exported graphs against the zoo and PyTorch on the CPU: training throughput of one model four
// ways, in one invocation with rows and sides alternating.
//
//   exported  the model exported from Python (python/export_model.py, train mode, dynamic batch)
//             and trained as `plugtrain run` trains [model] name = "exported" (the graph pass of
//             plugins/exported/graph_fusion.h on, model.fused = true; --unfused adds the graph as
//             exported as a fifth side);
//   zoo       the same architecture from plugins/models (its defaults);
//   eager     bench/python/exported_peer.py: the Python model the export was made from, eager;
//   compile   the same under torch.compile (compiled in warm-up; --no-compile leaves it out).
// Rows: resnet18 (torchvision's, 10 classes, 128 x 128 images, batch 32, SGD lr 0.1 Nesterov
// momentum 0.9 weight decay 5e-4), nanoGPT's CPU configuration of shakespeare_char (4 layers, 4
// heads, width 128, context 64, batch 12, 65 characters) and a ViT on 28 x 28 images (patch 4,
// width 128, depth 6, heads 4, batch 64): the transformers with nanoGPT's AdamW (lr 1e-3, betas
// (0.9, 0.99), weight decay 0.1 on matrices) and clipping at 1, as bench/transformer_bench.cpp.
// A plugtrain step (batch, forward, backward, optimizer) comes from a StepTimer kept for the whole
// bench (DefaultRun::step_seconds), so every round's steps are warm; --steps N (3): each side
// trains N steps in a row per round, and its figure for the round is their mean, after --settle N
// (1) untimed on both sides: the first step after another model's runs with the caches full of
// that model (15-25% slower for the GPT here), which a run, training one model, never sees. The
// plugtrain sides take turns at the seat right after the Python peer's steps, which runs a few
// percent slower while the peer's threads wake (run_round). The table: median per side and the
// ratios of the exported side to each other side.
//
//   exported_bench [--rounds N] [--warmup N] [--steps N] [--settle N] [--only row,row] [--threads N] [--no-compile]
//                  [--unfused]
//   (--threads sets train.threads on the plugtrain sides and the peer's torch.set_num_threads)
#include <ATen/Parallel.h>
#include <unistd.h>

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
namespace fs = std::filesystem;

struct Row {
  std::string label, kind;      // kind: resnet18, gpt or vit
  std::vector<std::int64_t> n;  // resnet18: batch, size; gpt: vocab, context, layers, heads, width, batch; vit: patch,
                                // width, depth, heads, batch
  std::int64_t batch() const { return kind == "resnet18" ? n[0] : n.back(); }
  std::int64_t per_sample() const { return kind == "gpt" ? n[1] : 1; }  // tokens per sample (gpt), 1
};

const std::vector<Row>& rows() {
  static const std::vector<Row> all{{"resnet18", "resnet18", {32, 128}},
                                    {"gpt_nanogpt_cpu", "gpt", {65, 64, 4, 4, 128, 12}},
                                    {"vit_fashion", "vit", {4, 128, 6, 4, 64}}};
  return all;
}

std::string number(std::int64_t v) { return std::to_string(v); }

// The arguments of python/export_model.py that export the row's Python model.
std::string export_arguments(const Row& r) {
  const std::string twins = std::string(PLUGTRAIN_TWINS_DIR) + "/transformer_twins.py";
  if (r.kind == "resnet18")
    return "torchvision:resnet18 --input 3x" + number(r.n[1]) + "x" + number(r.n[1]) +
           " --args '{\"num_classes\": 10}'";
  if (r.kind == "gpt")
    return twins + ":GPT --input " + number(r.n[1]) + " --dtype int64 --vocab " + number(r.n[0]) +
           " --args '{\"vocab\": " + number(r.n[0]) + ", \"context\": " + number(r.n[1]) +
           ", \"n_layer\": " + number(r.n[2]) + ", \"n_head\": " + number(r.n[3]) + ", \"n_embd\": " + number(r.n[4]) +
           "}'";
  return twins + ":ViT --input 1x28x28 --args '{\"patch\": " + number(r.n[0]) + ", \"width\": " + number(r.n[1]) +
         ", \"depth\": " + number(r.n[2]) + ", \"heads\": " + number(r.n[3]) +
         ", \"mlp_ratio\": 4.0, \"classes\": 10}'";
}

// The row's .pt2 in `folder`, written by python/export_model.py (its output kept for the error).
fs::path export_row(const Row& r, const fs::path& folder) {
  const fs::path file = folder / (r.label + ".pt2");
  const fs::path log = folder / (r.label + ".export.log");
  const std::string python = bench::python_executable();
  if (python.empty())
    throw std::runtime_error("no Python with torch to export " + r.label + " with (set PLUGTRAIN_BENCH_PYTHON)");
  const std::string command = python + " " + PLUGTRAIN_TWINS_DIR + "/export_model.py " + export_arguments(r) +
                              " --out " + file.string() + " > " + log.string() + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    throw std::runtime_error("exporting " + r.label + " failed: " + text.str());
  }
  return file;
}

// A tokens folder of random ids (nanoGPT's layout) for the GPT row.
void write_tokens(const Row& r, const fs::path& folder) {
  bench::write_random_tokens(folder, r.n[0], 64 * r.n[1], 64 * r.n[1]);
}

// The row's experiment with `model` as its [model] table.
std::string experiment_text(const Row& r, const fs::path& folder, const std::string& model) {
  std::string t = "[experiment]\nname = \"exported-bench\"\nseed = 1\n[backend]\nname = \"cpu\"\n[model]\n" + model;
  if (r.kind == "resnet18")
    return t + "[data]\ndataset = \"synthetic\"\nsynthetic_classes = 10\nsynthetic_shape = [3, " + number(r.n[1]) +
           ", " + number(r.n[1]) + "]\nsynthetic_train_size = " + number(4 * r.batch()) +
           "\nsynthetic_test_size = " + number(r.batch()) + "\nbatch_size = " + number(r.batch()) + "\n" +
           bench::kSgdRecipeTables;
  if (r.kind == "gpt")
    t += "[task]\nname = \"language_model\"\n[data]\ndataset = \"tokens\"\npath = \"" + folder.string() +
         "/tokens\"\nbatch_size = " + number(r.batch()) + "\n[dataset]\ncontext = " + number(r.n[1]) + "\n";
  else
    t += "[data]\ndataset = \"synthetic\"\nsynthetic_shape = [1, 28, 28]\nsynthetic_train_size = 1024\n"
         "synthetic_test_size = 64\nbatch_size = " +
         number(r.batch()) + "\n";
  return t +
         "[optim]\nname = \"adamw\"\nlr = 1e-3\nbetas = [0.9, 0.99]\nweight_decay = 0.1\ndecay = \"matrices\"\n"
         "[train]\nepochs = 1\nlog_interval = 0\ngrad_clip = 1.0\n";
}

std::string zoo_model(const Row& r) {
  if (r.kind == "resnet18") return "name = \"resnet18\"\nstem = \"imagenet\"\n";
  if (r.kind == "gpt")
    return "name = \"gpt\"\nlayers = " + number(r.n[2]) + "\nheads = " + number(r.n[3]) +
           "\nwidth = " + number(r.n[4]) + "\n";
  return "name = \"vit\"\npatch = " + number(r.n[0]) + "\nwidth = " + number(r.n[1]) + "\ndepth = " + number(r.n[2]) +
         "\nheads = " + number(r.n[3]) + "\n";
}

struct BenchOptions {
  int rounds = 5, warmup = 2, steps = 3, settle = 1, threads = 0;
  bool compile = true, unfused = false;
  std::vector<std::string> only;
};

[[noreturn]] void usage() {
  std::fprintf(
      stderr,
      "usage: exported_bench [--rounds N] [--warmup N] [--steps N] [--settle N] [--only row,row] [--threads N] "
      "[--no-compile] [--unfused]\n");
  std::exit(2);
}

BenchOptions parse(int argc, char** argv) {
  BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    const bool more = i + 1 < argc;
    if (!std::strcmp(argv[i], "--rounds") && more)
      o.rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup") && more)
      o.warmup = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps") && more)
      o.steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--settle") && more)
      o.settle = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && more)
      o.threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-compile"))
      o.compile = false;
    else if (!std::strcmp(argv[i], "--unfused"))
      o.unfused = true;
    else if (!std::strcmp(argv[i], "--only") && more) {
      std::stringstream list(argv[++i]);
      for (std::string name; std::getline(list, name, ',');) o.only.push_back(name);
    } else {
      usage();
    }
  }
  if (o.rounds < 1 || o.steps < 1 || o.warmup < 0 || o.settle < 0 || o.threads < 0) {
    std::fprintf(stderr, "exported_bench: --rounds and --steps must be >= 1, --warmup, --settle and --threads >= 0\n");
    std::exit(2);
  }
  return o;
}

// Seconds of one step of each side, by side.
using Times = std::map<std::string, std::vector<double>>;

void print_table(const std::vector<Row>& chosen, std::map<std::string, Times>& times, const BenchOptions& o) {
  std::printf("\n  %-16s %6s %10s %10s %10s %10s %10s %8s %8s %8s %9s\n", "row", "batch", "exported", "unfused", "zoo",
              "eager", "compile", "x zoo", "x eager", "x comp.", "x unfused");
  for (const Row& r : chosen) {
    Times& t = times[r.label];
    const double units = double(r.batch() * r.per_sample());
    const auto rate = [&](const std::string& side) { return t[side].empty() ? 0.0 : units / bench::median(t[side]); };
    const double ours = rate("exported");
    const auto ratio = [&](const std::string& side) { return rate(side) > 0 ? ours / rate(side) : 0.0; };
    std::printf("  %-16s %6lld %10.1f %10.1f %10.1f %10.1f %10.1f %8.3f %8.3f %8.3f %9.3f\n", r.label.c_str(),
                (long long)r.batch(), ours, rate("unfused"), rate("zoo"), rate("eager"), rate("compile"), ratio("zoo"),
                ratio("eager"), ratio("compile"), ratio("unfused"));
  }
  std::printf("  (gpt: tokens/s; resnet18 and vit: samples/s; 0: that side not run)\n");
}

struct PlugtrainSides {
  std::vector<std::unique_ptr<bench::ExperimentFile>> files;
  std::map<std::string, std::unique_ptr<bench::DefaultRun>> runs;  // by side
};

PlugtrainSides build_sides(const Row& r, const fs::path& folder, const BenchOptions& o) {
  const fs::path file = export_row(r, folder);
  std::vector<std::pair<std::string, std::string>> models{
      {"exported", "name = \"exported\"\nfile = \"" + file.string() + "\"\n"}, {"zoo", zoo_model(r)}};
  if (o.unfused) models.emplace_back("unfused", models[0].second + "fused = false\n");
  const std::vector<std::string> sets =
      o.threads > 0 ? std::vector<std::string>{"train.threads=" + number(o.threads)} : std::vector<std::string>{};
  PlugtrainSides s;
  for (const auto& [side, model] : models) {
    s.files.push_back(std::make_unique<bench::ExperimentFile>("exported_bench_" + r.label + "_" + side,
                                                              experiment_text(r, folder, model)));
    s.runs[side] = bench::build_default_run(s.files.back()->path(), sets);
  }
  return s;
}

std::string add_command(const Row& r, const std::string& mode) {
  std::string c = "add " + r.label + "_" + mode + " " + mode + " " + r.kind;
  for (std::int64_t v : r.n) c += " " + number(v);
  return c;
}

// One round of a row: every side once, plugtrain's sides first and the peer's after them, each
// group's order rotated by `round`. The step right after the peer's runs a few percent slower
// (its threads wake), so that seat moves from one plugtrain side to the next each round.
void run_round(const Row& r, PlugtrainSides& sides, bench::PythonPeer& peer, const std::vector<std::string>& order,
               int round, const BenchOptions& o, Times* times) {
  std::vector<std::string> ours, theirs;
  for (const std::string& side : order) (sides.runs.count(side) ? ours : theirs).push_back(side);
  std::rotate(ours.begin(), ours.begin() + std::ptrdiff_t(std::size_t(round) % ours.size()), ours.end());
  if (!theirs.empty())
    std::rotate(theirs.begin(), theirs.begin() + std::ptrdiff_t(std::size_t(round) % theirs.size()), theirs.end());
  ours.insert(ours.end(), theirs.begin(), theirs.end());
  for (const std::string& side : ours) {
    double seconds = 0;
    if (const auto run = sides.runs.find(side); run != sides.runs.end()) {
      seconds = run->second->step_seconds(o.steps, o.settle);
    } else {
      const nlohmann::json a =
          peer.ask("step " + r.label + "_" + side + " " + number(o.steps) + " " + number(o.settle));
      if (a.is_null()) continue;
      seconds = a.at("seconds").get<double>();
    }
    if (times) (*times)[side].push_back(seconds);
    std::printf("  %s %.4f s", side.c_str(), seconds);
  }
  std::printf("\n");
  std::fflush(stdout);
}

int run_bench(const BenchOptions& o, const std::vector<Row>& chosen) {
  const fs::path folder = fs::temp_directory_path() / ("exported_bench_" + std::to_string(::getpid()));
  fs::create_directories(folder / "tokens");
  std::vector<PlugtrainSides> sides;
  for (const Row& r : chosen) {
    if (r.kind == "gpt") write_tokens(r, folder / "tokens");
    sides.push_back(build_sides(r, folder, o));
  }
  const int threads = at::get_num_threads();
  bench::PythonPeer peer("exported_peer.py", {"--threads", number(threads), "--twins", PLUGTRAIN_TWINS_DIR});
  std::vector<std::string> order{"exported", "zoo", "eager"};
  if (o.unfused) order.insert(order.begin() + 1, "unfused");
  if (o.compile) order.push_back("compile");
  for (std::size_t i = 0; i < chosen.size(); ++i)
    for (const std::string mode : {"eager", "compile"}) {
      if (mode == std::string("compile") && !o.compile) continue;
      const nlohmann::json a = peer.ask(add_command(chosen[i], mode));
      if (!a.is_null() && mode == std::string("eager"))
        std::printf("%s: parameters exported %lld, zoo %lld, PyTorch %lld\n", chosen[i].label.c_str(),
                    (long long)sides[i].runs["exported"]->built->parameters,
                    (long long)sides[i].runs["zoo"]->built->parameters,
                    (long long)a.at("parameters").get<std::int64_t>());
    }
  std::map<std::string, Times> times;
  for (int round = 0; round < o.warmup + o.rounds; ++round) {
    const bool timed = round >= o.warmup;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      std::printf("%s %d %-16s", timed ? "round" : "warmup", round + 1, chosen[i].label.c_str());
      run_round(chosen[i], sides[i], peer, order, round, o, timed ? &times[chosen[i].label] : nullptr);
    }
  }
  std::printf(
      "\nexported graphs: training throughput, fp32, %d intra-op threads on every side, median of %d rounds "
      "(rows alternating, seats rotating; a round's figure: the mean of %d steps in a row after %d untimed) "
      "after %d warm-up\n",
      threads, o.rounds, o.steps, o.settle, o.warmup);
  if (peer.ok() && peer.hello().contains("torch"))
    std::printf("torch %s\n", peer.hello().at("torch").get<std::string>().c_str());
  print_table(chosen, times, o);
  if (!peer.ok()) std::printf("PyTorch peer: skipped (%s)\n", peer.skipped().c_str());
  sides.clear();
  fs::remove_all(folder);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions o = parse(argc, argv);
  std::vector<Row> chosen;
  for (const Row& r : rows())
    if (o.only.empty() || std::find(o.only.begin(), o.only.end(), r.label) != o.only.end()) chosen.push_back(r);
  if (chosen.empty()) {
    std::fprintf(stderr, "exported_bench: --only names no row (resnet18, gpt_nanogpt_cpu, vit_fashion)\n");
    return 2;
  }
  try {
    return run_bench(o, chosen);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exported_bench: %s\n", e.what());
    return 2;
  }
}
