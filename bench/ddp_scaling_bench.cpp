// ddp on the CPU: 2 processes (1 intra-op thread each, gradients all-reduced through c10d
// Gloo) against 1 process with 2 intra-op threads, at the same global batch, on the same
// machine. Goal: ddp at least 0.9x the single process's samples/s.
//
// Each iteration is a real `plugtrain run` of one epoch; the figure is the run's own training
// throughput from summary.json (training samples over training time: process start-up,
// rendezvous and evaluation excluded). The two set-ups alternate so machine noise hits both
// alike; afterwards the program prints the median samples/s of each and the ratio.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_stats.h"

namespace {

using plugtrain::bench::median;

namespace fs = std::filesystem;

struct Workload {
  std::string model;
  std::int64_t global_batch;
  std::int64_t train_subset;  // 0: all 60,000
};

// Small steps (the MLP at batch 100: ~2.5 ms) are dominated by the all-reduce and by the
// optimizer step every rank repeats; larger global batches amortise both.
const std::map<std::string, Workload> kWorkloads = {
    {"mlp/batch_100", {"mlp", 100, 0}},
    {"mlp/batch_1000", {"mlp", 1000, 0}},
    {"convnet/batch_100", {"convnet", 100, 6000}},
    {"convnet/batch_400", {"convnet", 400, 6000}},
};

std::map<std::string, std::vector<double>> g_samples_per_second;  // "mlp/ddp_2_processes" -> runs

fs::path work_dir() {
  static const fs::path dir = fs::temp_directory_path() / ("plugtrain-ddp-bench-" + std::to_string(::getpid()));
  return dir;
}

// One `plugtrain run`; returns its training samples/s.
double train_once(const Workload& w, bool ddp) {
  const fs::path dir = work_dir();
  fs::create_directories(dir);
  // The real files: $FASHION_MNIST, else Debian's folder; synthetic data of their shape without.
  const char* env = std::getenv("FASHION_MNIST");
  const std::string path = env && *env ? env : "/usr/share/datasets/fashion-mnist";
  const bool real = fs::exists(path);
  std::ofstream(dir / "exp.toml") << "[experiment]\nname = \"bench\"\nseed = 1\n[model]\nname = \"" << w.model
                                  << "\"\n[data]\ndataset = \"" << (real ? "fashion-mnist" : "synthetic")
                                  << (real ? "\"\npath = \"" + path : std::string()) << "\"\nsynthetic_train_size = 60000\ntrain_subset = " << w.train_subset
                                  << "\ntest_subset = 1000\nglobal_batch_size = " << w.global_batch
                                  << "\nbatch_size = " << w.global_batch
                                  << "\n[checkpoint]\nsave = \"none\"\n[train]\nepochs = 1\nlog_interval = 0\n";
  const std::string setup = ddp ? "--set backend.devices=2" : "--set train.threads=2";
  const std::string command = "cd '" + dir.string() + "' && rm -rf runs && env -u PLUGTRAIN_PLUGIN_PATH '" +
                              PLUGTRAIN_EXE + "' run exp.toml " + setup + " > run.log 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::ifstream log(dir / "run.log");
    std::stringstream text;
    text << log.rdbuf();
    std::fprintf(stderr, "plugtrain run failed:\n%s\n", text.str().c_str());
    std::exit(1);
  }
  std::ifstream in(dir / "runs" / "bench" / "version_0" / "summary.json");
  return nlohmann::json::parse(in).at("samples_per_second").get<double>();
}

void BM_Train(benchmark::State& state, const std::string& workload, bool ddp) {
  const Workload& w = kWorkloads.at(workload);
  for (auto _ : state) {
    const double sps = train_once(w, ddp);
    g_samples_per_second[workload + (ddp ? "/ddp_2_processes" : "/1_process_2_threads")].push_back(sps);
    state.SetIterationTime(double(w.train_subset ? w.train_subset : 60000) / sps);
    state.counters["samples_per_s"] = sps;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Alternate: single, ddp, single, ddp, ... per workload, 3 rounds.
  for (const auto& [name, w] : kWorkloads)
    for (int round = 0; round < 3; ++round) {
      benchmark::RegisterBenchmark(("ddp_scaling/" + name + "/1_process_2_threads").c_str(),
                                   [n = name](benchmark::State& s) { BM_Train(s, n, false); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("ddp_scaling/" + name + "/ddp_2_processes").c_str(),
                                   [n = name](benchmark::State& s) { BM_Train(s, n, true); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("\nddp on the CPU, median of the runs (training samples/s at the same global batch):\n");
  for (const auto& [name, w] : kWorkloads) {
    const double single = median(g_samples_per_second[name + "/1_process_2_threads"]);
    const double ddp = median(g_samples_per_second[name + "/ddp_2_processes"]);
    if (single <= 0 || ddp <= 0) continue;
    std::printf("  %-18s 1 process x 2 threads %8.0f | 2 processes x 1 thread (ddp) %8.0f | ratio %.3f (goal >= 0.9)\n",
                name.c_str(), single, ddp, ddp / single);
  }
  fs::remove_all(work_dir());
  return 0;
}
