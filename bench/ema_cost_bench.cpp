// What the EMA of the weights (train.ema_decay) costs per optimizer step on this machine: the
// update (one foreach lerp over every parameter and buffer, train/model_ema.h) against the
// training step it follows, both measured here in one process, for the Fashion-MNIST MLP
// (batch 100) and ResNet-18 in CIFAR form (batch 128), each built by the run's own stages
// (bench/default_run.h) on synthetic data of the real shapes. Prints the median times and the
// update's share of a step with it.
//   ema_cost_bench [--steps N]   (default 5 timed steps per model, after one untimed)
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "default_run.h"
#include "train/model_ema.h"

namespace {

using namespace plugtrain;
using Clock = std::chrono::steady_clock;

struct Case {
  const char* name;
  std::string model;  // the [model] table's body
  const char* shape;
  std::int64_t batch;
};

}  // namespace

int main(int argc, char** argv) {
  std::int64_t steps = 5;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoll(argv[i + 1]);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "plugtrain-ema-cost-bench";
  std::filesystem::create_directories(dir);
  const std::vector<Case> cases = {{"mlp (Fashion-MNIST)", "name = \"mlp\"", "[1, 28, 28]", 100},
                                   {"resnet18 (CIFAR)", "name = \"resnet18\"\nstem = \"cifar\"", "[3, 32, 32]", 128}};
  std::printf("| model | parameters | step | EMA update | EMA share of the step |\n| --- | --- | --- | --- | --- |\n");
  for (const Case& c : cases) {
    const std::filesystem::path file = dir / "exp.toml";
    std::ofstream(file) << "[experiment]\nname = \"ema-cost\"\n[backend]\nname = \"cpu\"\n[model]\n" << c.model
                        << "\n[data]\ndataset = \"synthetic\"\nsynthetic_shape = " << c.shape
                        << "\nsynthetic_train_size = " << c.batch * (steps + 1) << "\nsynthetic_test_size = 10\nbatch_size = "
                        << c.batch << "\n[train]\nlog_interval = 0\n";
    const auto run = bench::build_default_run(file, {});
    Model& model = *run->built->model;
    std::vector<double> step = run->trainer().time_steps(steps + 1);
    step.erase(step.begin());  // the first step allocates
    ModelEma ema(model, 0.9998, /*warmup=*/true);
    std::vector<double> update;
    for (std::int64_t i = 0; i <= steps; ++i) {
      const auto start = Clock::now();
      ema.update(i + 1);
      if (i > 0) update.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    const double s = bench::median(step), u = bench::median(update);
    std::printf("| %s | %lld | %.2f ms | %.3f ms | %.2f %% |\n", c.name, static_cast<long long>(run->built->parameters),
                s * 1e3, u * 1e3, 100 * u / (s + u));
  }
  std::filesystem::remove_all(dir);
  return 0;
}
