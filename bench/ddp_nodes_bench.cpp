// ddp on the CPU across ranks and nodes, plugtrain against PyTorch DDP: training samples/s at 1, 2
// and 4 ranks (one intra-op thread each, gradients all-reduced through gloo), within one node and
// across two, for the MLP and the zoo's small GPT, both sides in one invocation, rows alternating
// (and the side that goes first swapped every round, so neither always follows the other's).
//
//   plugtrain  `plugtrain run` of each rank, started with the launcher variables (RANK, WORLD_SIZE,
//              LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT); the figure is rank 0's
//              summary.json samples_per_second (training samples of every rank over the training
//              time: start-up, rendezvous and evaluation left out; its loader included).
//   PyTorch    bench/python/ddp_scaling_peer.py: the same model, batch, optimizer and threads in
//              DistributedDataParallel over gloo, its ranks started the same way; the figure is
//              rank 0's timed steps after warm-up; it also times the computation alone (no_sync)
//              and the all-reduce alone, which say where a step's time goes.
//   one node   every rank on this machine's loopback (MASTER_ADDR 127.0.0.1).
//   two nodes  half the ranks in each of two network namespaces of the tests' cluster
//              (tests/slurm/netns_slurm.sh: eth0 on a bridge, 10.77.X.1 and .2), rank 0's node
//              hosting the rendezvous: the all-reduce crosses veth pairs and a bridge. Skipped with
//              the reason where the cluster cannot start (not root, no iproute2).
// Rows: the MLP (784-256-128-10, SGD momentum 0.9, 64 samples a rank and step, fashion-mnist-shaped
// synthetic data) and nanoGPT's CPU shape of the GPT (4 layers, 4 heads, width 128, context 64,
// 12 windows a rank and step, AdamW, clipping at 1, a tokens folder of random ids). Efficiency is
// samples/s at N ranks over N times the same side's samples/s at 1 rank (weak scaling: the batch
// per rank is fixed). The machine's cores and load are printed beside the table.
//
//   ddp_nodes_bench [--rounds N] [--only mlp,gpt] [--ranks 1,2,4] [--no-nodes]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_stats.h"
#include "python_peer.h"
#include "token_folder.h"

namespace {

namespace fs = std::filesystem;
using plugtrain::bench::median;

struct Options {
  int rounds = 3;
  std::vector<std::string> models{"mlp", "gpt"};
  std::vector<int> ranks{1, 2, 4};
  bool nodes = true;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
      o.rounds = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      o.models = split(argv[++i]);
    } else if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc) {
      o.ranks.clear();
      for (const auto& r : split(argv[++i])) o.ranks.push_back(std::atoi(r.c_str()));
    } else if (!std::strcmp(argv[i], "--no-nodes")) {
      o.nodes = false;
    } else {
      std::fprintf(stderr, "usage: ddp_nodes_bench [--rounds N] [--only mlp,gpt] [--ranks 1,2,4] [--no-nodes]\n");
      std::exit(2);
    }
  }
  for (const auto& m : o.models)
    if (m != "mlp" && m != "gpt") {
      std::fprintf(stderr, "ddp_nodes_bench: --only takes mlp and gpt, not '%s'\n", m.c_str());
      std::exit(2);
    }
  for (int r : o.ranks)
    if (r < 1) {
      std::fprintf(stderr, "ddp_nodes_bench: --ranks are positive counts\n");
      std::exit(2);
    }
  if (o.rounds < 1) {
    std::fprintf(stderr, "ddp_nodes_bench: --rounds must be >= 1\n");
    std::exit(2);
  }
  return o;
}

fs::path work_dir() {
  static const fs::path dir = fs::temp_directory_path() / ("plugtrain-ddp-nodes-" + std::to_string(::getpid()));
  return dir;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The first command's output and exit status.
std::pair<int, std::string> shell(const std::string& command) {
  const fs::path out = work_dir() / "shell.txt";
  const int status = std::system(("(" + command + ") > " + quoted(out.string()) + " 2>&1").c_str());
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, text.str()};
}

// The tests' cluster, for its namespaces: started by the constructor, stopped by the destructor.
class Namespaces {
 public:
  Namespaces() {
    dir_ = work_dir() / "cluster";
    fs::create_directories(dir_);
    const auto [code, out] = shell(script() + " start " + quoted(dir_.string()) + " 2");
    if (code != 0) {
      skipped_ = code == 77 ? out.substr(0, out.find('\n')) : "the cluster did not start: " + out;
      return;
    }
    std::ifstream(dir_ / "netns.subnet") >> subnet_;
  }
  ~Namespaces() {
    if (skipped_.empty()) shell(script() + " stop " + quoted(dir_.string()));
  }
  const std::string& skipped() const { return skipped_; }
  std::string name(int node) const { return "ptn" + subnet_ + "-" + std::to_string(node); }
  std::string address(int node) const { return "10.77." + subnet_ + "." + std::to_string(node); }

 private:
  static std::string script() { return quoted(std::string(PLUGTRAIN_SOURCE_DIR) + "/tests/slurm/netns_slurm.sh"); }
  fs::path dir_;
  std::string subnet_, skipped_;
};

struct Placement {
  std::string master_addr;
  std::vector<std::string> places;  // per rank: a namespace, or "-" for this machine's
};

Placement place(int ranks, bool two_nodes, const Namespaces* ns) {
  Placement p;
  p.master_addr = two_nodes ? ns->address(1) : "127.0.0.1";
  for (int r = 0; r < ranks; ++r) p.places.push_back(two_nodes ? ns->name(r < ranks / 2 ? 1 : 2) : "-");
  return p;
}

// The GPT's tokens: random ids of a 65-character vocabulary, a short val split.
fs::path token_folder() {
  const fs::path folder = work_dir() / "tokens";
  plugtrain::bench::write_random_tokens(folder, 65, 200000, 200);
  return folder;
}

std::string experiment(const std::string& model, int steps) {
  std::string t = "[experiment]\nname = \"bench\"\nseed = 1\n[backend]\nname = \"cpu\"\n";
  if (model == "mlp")
    t += "[model]\nname = \"mlp\"\n[data]\ndataset = \"synthetic\"\nsynthetic_shape = [1, 28, 28]\n"
         "synthetic_train_size = 60000\nsynthetic_test_size = 64\nbatch_size = 64\n"
         "[optim]\nname = \"sgd\"\nlr = 0.05\nmomentum = 0.9\n[train]\n";
  else
    t += "[model]\nname = \"gpt\"\nlayers = 4\nheads = 4\nwidth = 128\n[task]\nname = \"language_model\"\n"
         "[data]\ndataset = \"tokens\"\npath = \"" +
         token_folder().string() +
         "\"\nbatch_size = 12\n[dataset]\ncontext = 64\n[optim]\nname = \"adamw\"\nlr = 1e-3\nbetas = [0.9, 0.99]\n"
         "weight_decay = 0.1\ndecay = \"matrices\"\n[train]\ngrad_clip = 1.0\n";
  return t + "epochs = 1\nsteps_per_epoch = " + std::to_string(steps) +
         "\nlog_interval = 0\nthreads = 1\n[checkpoint]\nsave = \"none\"\n";
}

// One `plugtrain run` of every rank; rank 0's training samples/s (0 when a rank failed).
double plugtrain_side(const std::string& model, int steps, const Placement& p, int port) {
  const fs::path dir = work_dir() / "plugtrain";
  fs::create_directories(dir);
  std::ofstream(dir / "exp.toml") << experiment(model, steps);
  std::string script = "cd " + quoted(dir.string()) + " && rm -rf runs\n";
  const int world = int(p.places.size());
  for (int r = 0; r < world; ++r) {
    int local = 0, local_world = 0;
    for (int q = 0; q < world; ++q) {
      local_world += p.places[q] == p.places[r];
      local += q < r && p.places[q] == p.places[r];
    }
    const std::string enter = p.places[r] == "-" ? "" : "nsenter --net=/run/netns/" + p.places[r] + " ";
    script += enter + "env -u PLUGTRAIN_PLUGIN_PATH RANK=" + std::to_string(r) +
              " WORLD_SIZE=" + std::to_string(world) + " LOCAL_RANK=" + std::to_string(local) +
              " LOCAL_WORLD_SIZE=" + std::to_string(local_world) + " MASTER_ADDR=" + p.master_addr +
              " MASTER_PORT=" + std::to_string(port) + " " + quoted(PLUGTRAIN_EXE) + " run exp.toml > rank" +
              std::to_string(r) + ".log 2>&1 & P" + std::to_string(r) + "=$!\n";
  }
  for (int r = 0; r < world; ++r)
    script += "wait $P" + std::to_string(r) + " || { cat rank" + std::to_string(r) + ".log; exit 1; }\n";
  const auto [code, out] = shell(script);
  if (code != 0) {
    std::fprintf(stderr, "plugtrain %s at %d ranks failed:\n%s\n", model.c_str(), world, out.c_str());
    return 0;
  }
  std::ifstream in(dir / "runs" / "bench" / "version_0" / "summary.json");
  return nlohmann::json::parse(in).at("samples_per_second").get<double>();
}

struct Row {
  std::string model;
  int ranks;
  bool two_nodes;
  std::string label() const {
    return model + " " + std::to_string(ranks) + (ranks == 1 ? " rank " : " ranks") +
           (two_nodes ? " 2 nodes" : " 1 node");
  }
};

struct Figures {
  std::vector<double> plugtrain, torch, step_ms, compute_ms, allreduce_ms;
};

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

void print_table(const std::vector<Row>& rows, std::map<std::string, Figures>& figures) {
  std::printf("\n  %-22s %11s %6s %11s %6s %7s %9s %11s %13s\n", "row", "plugtrain", "eff", "pytorch", "eff", "ratio",
              "step ms", "compute ms", "allreduce ms");
  for (const Row& r : rows) {
    Figures& f = figures[r.label()];
    const double ours = median(f.plugtrain), theirs = median(f.torch);
    const Row one{r.model, 1, false};
    const double ours_1 = median(figures[one.label()].plugtrain), theirs_1 = median(figures[one.label()].torch);
    const auto efficiency = [&](double rate, double rate_1) { return rate_1 > 0 ? rate / (r.ranks * rate_1) : 0.0; };
    std::printf("  %-22s %11.0f %6.2f %11.0f %6.2f %7.3f %9.2f %11.2f %13.2f\n", r.label().c_str(), ours,
                efficiency(ours, ours_1), theirs, efficiency(theirs, theirs_1), theirs > 0 ? ours / theirs : 0.0,
                median(f.step_ms), median(f.compute_ms), median(f.allreduce_ms));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  fs::create_directories(work_dir());
  std::unique_ptr<Namespaces> ns;
  if (o.nodes) ns = std::make_unique<Namespaces>();
  const bool two_nodes = ns && ns->skipped().empty();
  plugtrain::bench::PythonPeer peer("ddp_scaling_peer.py", {"--twins", PLUGTRAIN_TWINS_DIR});
  std::printf("cores %u, load average at start %s\n", std::thread::hardware_concurrency(), load_average().c_str());
  std::printf("two nodes: %s\n", two_nodes ? "network namespaces of the tests' cluster"
                                           : (ns ? ns->skipped().c_str() : "not asked (--no-nodes)"));
  std::printf("python peer: %s\n",
              peer.ok() ? peer.hello().dump().c_str() : ("skipped (" + peer.skipped() + ")").c_str());
  std::vector<Row> rows;
  for (const auto& m : o.models)
    for (int n : o.ranks) {
      rows.push_back({m, n, false});
      if (two_nodes && n >= 2) rows.push_back({m, n, true});
    }
  std::map<std::string, Figures> figures;
  int port = 29600 + int(::getpid() % 1000) * 4;
  for (int round = 0; round < o.rounds; ++round)
    for (const Row& r : rows) {
      const int steps = r.model == "mlp" ? 200 : 40;
      const Placement p = place(r.ranks, r.two_nodes, ns.get());
      Figures& f = figures[r.label()];
      const auto ours = [&] { f.plugtrain.push_back(plugtrain_side(r.model, steps, p, ++port)); };
      const auto theirs = [&] {
        std::string command =
            "run " + r.model + " " + std::to_string(steps) + " 5 " + p.master_addr + " " + std::to_string(++port);
        for (const auto& place : p.places) command += " " + place;
        const nlohmann::json a = peer.ask(command);
        if (a.is_null()) return;
        f.torch.push_back(a.at("samples_per_second").get<double>());
        f.step_ms.push_back(a.at("step_ms").get<double>());
        f.compute_ms.push_back(a.at("compute_ms").get<double>());
        f.allreduce_ms.push_back(a.at("allreduce_ms").get<double>());
      };
      if (round % 2 == 0)
        ours(), theirs();
      else
        theirs(), ours();
      std::printf("round %d %-22s plugtrain %8.0f  pytorch %8.0f samples/s\n", round + 1, r.label().c_str(),
                  f.plugtrain.back(), f.torch.empty() ? 0.0 : f.torch.back());
      std::fflush(stdout);
    }
  std::printf(
      "\nmedians of %d rounds; eff: samples/s over ranks x the same side's 1 rank; ratio: plugtrain / "
      "pytorch; step, compute (no_sync) and all-reduce alone: pytorch's, per step\n",
      o.rounds);
  print_table(rows, figures);
  std::printf("\nload average at the end %s\n", load_average().c_str());
  ns.reset();
  fs::remove_all(work_dir());
  return 0;
}
