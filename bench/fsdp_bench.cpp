// Sharded training on the CPU against PyTorch FSDP2: nanoGPT's CPU configuration of its GPT
// (4 layers, 4 heads, width 128, a window of 64 characters, 12 windows per rank, AdamW with
// weight decay on matrices, clipping at 1) trained by 2 processes over Gloo, one intra-op thread
// each: `plugtrain run` with backend.strategy = "fsdp" (shard "full", ZeRO-3) against
// fully_shard on every block and the root (bench/python/fsdp2_peer.py, the twin of
// python/transformer_twins.py). Goals: tokens/s >= 1.0x FSDP2 (1.2x hoped for), peak resident
// memory per rank <= FSDP2's. Also ddp against fsdp at 2 and 4 processes.
//
// Each row is a whole run; the rows alternate within each round (plugtrain fsdp, FSDP2, ddp,
// ..., then the 4-process pair) so machine noise hits all alike, and the table gives medians
// of the rounds. plugtrain's figure is its own training throughput from summary.json (first
// steps included); FSDP2's is the wall time of its timed steps after 5 untimed ones.
//
//   build/bin/fsdp_bench [--rounds 5] [--steps 40]
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_stats.h"
#include "python_peer.h"

namespace {

using plugtrain::bench::median;
namespace fs = std::filesystem;

constexpr int kContext = 64, kLayers = 4, kHeads = 4, kWidth = 128, kBatch = 12;
int g_steps = 40;
int g_vocabulary = 0;  // the Jargon File's characters, as plugtrain's text data set counts them

struct Figures {
  std::vector<double> tokens_per_second, peak_rss;
};
std::map<std::string, Figures> g_rows;

fs::path work_dir() {
  static const fs::path dir = fs::temp_directory_path() / ("plugtrain-fsdp-bench-" + std::to_string(::getpid()));
  return dir;
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One `plugtrain run` of `processes` ranks with `strategy`.
void plugtrain_row(const std::string& row, int processes, const std::string& strategy) {
  const fs::path dir = work_dir();
  fs::create_directories(dir);
  std::ofstream(dir / "exp.toml")
      << "[experiment]\nname = \"bench\"\nseed = 1\n[backend]\nname = \"cpu\"\n[model]\nname = \"gpt\"\nlayers = "
      << kLayers << "\nheads = " << kHeads << "\nwidth = " << kWidth
      << "\ndropout = 0.0\n[task]\nname = \"language_model\"\n[data]\ndataset = \"text\"\n"
         "path = \"/usr/share/doc/jargon-text/jargon.txt.gz\"\nbatch_size = "
      << kBatch << "\ntest_batch_size = 64\n[dataset]\ncontext = " << kContext
      << "\nvocabulary = \"char\"\nval_fraction = 0.001\n[optim]\nname = \"adamw\"\nlr = 1e-3\nbetas = [0.9, 0.99]\n"
         "weight_decay = 0.1\ndecay = \"matrices\"\n[checkpoint]\nsave = \"none\"\n[train]\nepochs = 1\n"
         "grad_clip = 1.0\nlog_interval = 0\nthreads = 1\nsteps_per_epoch = "
      << g_steps + 5 << "\n";
  const std::string command = "cd '" + dir.string() + "' && rm -rf runs && env -u PLUGTRAIN_PLUGIN_PATH '" +
                              PLUGTRAIN_EXE + "' run exp.toml --set backend.devices=" + std::to_string(processes) +
                              " --set backend.strategy='\"" + strategy + "\"' > run.log 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "plugtrain run failed:\n%s\n", slurp(dir / "run.log").c_str());
    std::exit(1);
  }
  std::smatch vocabulary;
  const std::string log = slurp(dir / "run.log");
  if (std::regex_search(log, vocabulary, std::regex("vocabulary: ([0-9]+) characters")))
    g_vocabulary = std::stoi(vocabulary[1]);
  const nlohmann::json s = nlohmann::json::parse(slurp(dir / "runs" / "bench" / "version_0" / "summary.json"));
  g_rows[row].tokens_per_second.push_back(s.at("samples_per_second").get<double>() * kContext);
  g_rows[row].peak_rss.push_back(s["epochs"][0]["memory"].at("peak_bytes").get<double>());
}

// One FSDP2 run of 2 ranks (skipped, with the reason, where the peer cannot run).
std::string g_peer_skipped;
void fsdp2_row(const std::string& row) {
  const std::string python = plugtrain::bench::python_executable();
  if (python.empty() || g_vocabulary == 0) {
    g_peer_skipped = python.empty() ? "no Python beside the torch wheel" : "no vocabulary";
    return;
  }
  const std::string command = "'" + python + "' '" + std::string(PLUGTRAIN_BENCH_PYTHON_DIR) +
                              "/fsdp2_peer.py' --processes 2 --vocab " + std::to_string(g_vocabulary) + " --context " +
                              std::to_string(kContext) + " --layers " + std::to_string(kLayers) + " --heads " +
                              std::to_string(kHeads) + " --width " + std::to_string(kWidth) + " --batch " +
                              std::to_string(kBatch) + " --steps " + std::to_string(g_steps) + " --warmup 5 --twins '" +
                              PLUGTRAIN_TWINS_DIR + "' 2>/dev/null";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  if (pipe) ::pclose(pipe);
  const auto line = out.rfind("{");
  if (line == std::string::npos) {
    g_peer_skipped = "the peer printed nothing";
    return;
  }
  const nlohmann::json j = nlohmann::json::parse(out.substr(line), nullptr, false);
  if (j.is_discarded() || j.contains("skipped")) {
    g_peer_skipped = j.is_discarded() ? "the peer's answer is not JSON" : j.at("skipped").get<std::string>();
    return;
  }
  double peak = 0;
  for (const auto& p : j["peak_rss_bytes"]) peak = std::max(peak, p.get<double>());
  g_rows[row].tokens_per_second.push_back(j.at("tokens_per_second").get<double>());
  g_rows[row].peak_rss.push_back(peak);
}

void register_row(const std::string& row, std::function<void()> run) {
  benchmark::RegisterBenchmark(
      ("fsdp/" + row).c_str(),
      [row, run](benchmark::State& state) {
        for (auto _ : state) {
          run();
          const auto& t = g_rows[row].tokens_per_second;
          state.SetIterationTime(t.empty() ? 0.0 : double(g_steps) * kBatch * kContext / t.back());
          if (!t.empty()) state.counters["tokens_per_s"] = t.back();
        }
      })
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

void print_row(const std::string& row, const std::string& against = "") {
  const Figures& f = g_rows[row];
  if (f.tokens_per_second.empty()) return;
  const double tps = median(f.tokens_per_second), rss = median(f.peak_rss);
  std::printf("  %-28s %9.0f tokens/s  peak RSS per rank %7.1f MiB", row.c_str(), tps, rss / (1 << 20));
  if (!against.empty() && !g_rows[against].tokens_per_second.empty())
    std::printf("  | %.2fx the tokens/s, %.2fx the memory of %s", tps / median(g_rows[against].tokens_per_second),
                rss / median(g_rows[against].peak_rss), against.c_str());
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--steps") g_steps = std::atoi(argv[i + 1]);
  }
  for (int round = 0; round < rounds; ++round) {
    register_row("plugtrain_fsdp_2", [] { plugtrain_row("plugtrain_fsdp_2", 2, "fsdp"); });
    register_row("pytorch_fsdp2_2", [] { fsdp2_row("pytorch_fsdp2_2"); });
    register_row("plugtrain_ddp_2", [] { plugtrain_row("plugtrain_ddp_2", 2, "ddp"); });
    register_row("plugtrain_fsdp_4", [] { plugtrain_row("plugtrain_fsdp_4", 4, "fsdp"); });
    register_row("plugtrain_ddp_4", [] { plugtrain_row("plugtrain_ddp_4", 4, "ddp"); });
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("\nnanoGPT's CPU GPT, %d steps, medians of %d rounds (Gloo, one thread per rank):\n", g_steps, rounds);
  print_row("plugtrain_fsdp_2", "pytorch_fsdp2_2");
  print_row("pytorch_fsdp2_2");
  if (!g_peer_skipped.empty()) std::printf("  pytorch FSDP2: skipped (%s)\n", g_peer_skipped.c_str());
  print_row("plugtrain_ddp_2");
  print_row("plugtrain_fsdp_2", "plugtrain_ddp_2");
  print_row("plugtrain_ddp_4");
  print_row("plugtrain_fsdp_4", "plugtrain_ddp_4");
  fs::remove_all(work_dir());
  return 0;
}
