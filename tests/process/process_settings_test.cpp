// Process-wide settings (process/process_settings.h): a built run changes LibTorch's threads, TF32,
// cuDNN autotuner and CPU generator, and puts them back when it goes, so that a command timing
// backend A and then backend B in one process gives B exactly what B gets alone. A run on the
// host CPU also keeps freed memory in the heap while it lives (process/host_heap.h).
// ctest-label: unit
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <list>
#include <sstream>

#include <cstring>

#include <gtest/gtest.h>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/empty.h>

#include "run/build.h"
#include "run/plan.h"
#include "run/validate.h"
#include "support/run_process.h"

namespace plugtrain {
namespace process_settings_test {

namespace fs = std::filesystem;

// What the process-wide settings are now.
struct Settings {
  int threads;
  bool tf32_matmul, tf32_convolutions, cudnn_benchmark, cudnn_deterministic, deterministic_algorithms;
  at::Tensor cpu_generator_state;

  static Settings now() {
    auto& c = at::globalContext();
    return {at::get_num_threads(),
            c.allowTF32CuBLAS(),
            c.allowTF32CuDNN(),
            c.benchmarkCuDNN(),
            c.deterministicCuDNN(),
            c.deterministicAlgorithms(),
            c.defaultGenerator(c10::Device(c10::kCPU)).get_state()};
  }
  void expect_equal(const Settings& other, const std::string& when) const {
    EXPECT_EQ(threads, other.threads) << when;
    EXPECT_EQ(tf32_matmul, other.tf32_matmul) << when;
    EXPECT_EQ(tf32_convolutions, other.tf32_convolutions) << when;
    EXPECT_EQ(cudnn_benchmark, other.cudnn_benchmark) << when;
    EXPECT_EQ(cudnn_deterministic, other.cudnn_deterministic) << when;
    EXPECT_EQ(deterministic_algorithms, other.deterministic_algorithms) << when;
    EXPECT_TRUE(cpu_generator_state.equal(other.cpu_generator_state)) << when;
  }
};

class ProcessSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir("settings");
    std::ofstream(dir_ / "exp.toml")
        << "[model]\nname = \"mlp\"\nhidden = [8]\n[data]\ndataset = \"synthetic\"\n"
           "synthetic_shape = [1, 4, 4]\nsynthetic_train_size = 64\nsynthetic_test_size = 16\n"
           "batch_size = 16\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A run of exp.toml on `backend`, built as `plugtrain run` builds it; its log in `log`.
  std::unique_ptr<BuiltRun> build(const std::string& backend, std::vector<std::string> overrides, std::string& log) {
    RunRequest request;
    request.experiment_file = dir_ / "exp.toml";
    request.plugin_paths = {PLUGTRAIN_PLUGIN_DIR, fs::path(PLUGTRAIN_TEST_PLUGIN_DIR) / "graph_recorder"};
    request.overrides = std::move(overrides);
    request.overrides.push_back("backend.name=\"" + backend + "\"");
    runs_.push_back(validate(request));
    const RunPlan plan = plan_run(runs_.back(), run_trials(runs_.back(), {}, std::nullopt), {}, std::nullopt);
    std::unique_ptr<BuiltRun> built = build_run(runs_.back(), plan, nullptr, nullptr, logs_.emplace_back());
    log = logs_.back().str();
    return built;
  }
  // Outlive the runs built from them (lists: never moved): the run and the log it writes to.
  std::list<ValidatedRun> runs_;
  std::list<std::ostringstream> logs_;

  // Builds a run of exp.toml on `backend` with `overrides`, trains two steps, and returns the
  // settings the run had while it trained. The run is gone when this returns.
  Settings settings_while_training(const std::string& backend, std::vector<std::string> overrides) {
    std::string log;
    const std::unique_ptr<BuiltRun> built = build(backend, std::move(overrides), log);
    built->trainer->time_steps(2);
    return Settings::now();
  }
  fs::path dir_;
};

// Minor page faults of allocating, writing and freeing a block of `bytes` with glibc's malloc,
// as a training step does with its activations. (Plain malloc, not a tensor: a tensor's small
// bookkeeping allocated after its storage can pin the freed storage below the heap's top, so
// whether the next one fits there depends on the heap's layout, not on the setting.)
long faults_of_a_step(std::size_t bytes) {
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  void* block = std::malloc(bytes);
  std::memset(block, 1, bytes);
  asm volatile("" : : "r"(block) : "memory");  // the compiler may not drop the unread block
  std::free(block);
  ::getrusage(RUSAGE_SELF, &after);
  return after.ru_minflt - before.ru_minflt;
}

TEST_F(ProcessSettingsTest, ARunOnTheHostCpuKeepsFreedMemoryForTheNextStepWhileItLives) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "the host heap setting is glibc's";
#endif
  for (const char* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_",
                           "GLIBC_TUNABLES", "LD_PRELOAD"})
    if (std::getenv(name)) GTEST_SKIP() << name << " is set: the environment decides how the heap behaves";
  // 64 MiB: above the largest block glibc ever serves from its heap by itself (32 MiB), so
  // without the setting every such block is mapped anew, a fault per page.
  constexpr std::size_t kBytes = std::size_t(64) << 20;
  const long pages = long(kBytes / std::size_t(::sysconf(_SC_PAGESIZE)));
  faults_of_a_step(kBytes);
  const long system = faults_of_a_step(kBytes);
  if (system < pages / 2)
    GTEST_SKIP() << "fresh mappings take " << system << " faults for " << pages
                 << " pages here (transparent huge pages): nothing to tell apart";

  std::string log;
  {
    const std::unique_ptr<BuiltRun> run = build("cpu", {}, log);
    EXPECT_NE(log.find("device: host heap keeps freed memory for the next step"), std::string::npos) << log;
    if (log.find("blocks under 32 MiB") != std::string::npos)
      GTEST_SKIP() << "this glibc keeps blocks under 32 MiB only (before 2.35): a 64 MiB one is mapped anew";
    faults_of_a_step(kBytes);  // the first step brings the pages into the heap
    EXPECT_LT(faults_of_a_step(kBytes), pages / 100) << "the next step reuses them";
    {
      std::string second_log;
      const std::unique_ptr<BuiltRun> second = build("cpu", {}, second_log);  // bench builds runs side by side
    }
    // What the second run left allocated (its plugin host) splits the kept block: the next step
    // takes new pages once (a second one too, for margin), and the steps after reuse them.
    faults_of_a_step(kBytes);
    faults_of_a_step(kBytes);
    EXPECT_LT(faults_of_a_step(kBytes), pages / 100) << "a second run that came and went leaves the first's setting";
  }
  EXPECT_GE(faults_of_a_step(kBytes), pages / 2) << "glibc's own behaviour once the run is gone";

  const std::unique_ptr<BuiltRun> system_run = build("cpu", {"train.keep_host_memory=false"}, log);
  EXPECT_EQ(log.find("host heap"), std::string::npos) << log;
  faults_of_a_step(kBytes);
  EXPECT_GE(faults_of_a_step(kBytes), pages / 2) << "train.keep_host_memory = false";
}

TEST_F(ProcessSettingsTest, BackendBAfterBackendAGetsExactlyWhatItGetsAlone) {
  const Settings before = Settings::now();
  const Settings b_alone = settings_while_training("cpu", {});
  before.expect_equal(Settings::now(), "after B alone");

  // A: another backend (an accelerator stand-in) with every process-wide setting changed.
  const Settings a = settings_while_training(
      "graphrec", {"train.threads=1", "train.tf32=true", "train.cudnn_benchmark=true", "experiment.seed=99"});
  EXPECT_EQ(a.threads, 1) << "A's own settings apply while A runs";
  EXPECT_TRUE(a.tf32_matmul);
  EXPECT_TRUE(a.cudnn_benchmark);
  before.expect_equal(Settings::now(), "after A");

  const Settings b_after_a = settings_while_training("cpu", {});
  b_alone.expect_equal(b_after_a, "B while it trains, after A");
  before.expect_equal(Settings::now(), "after A then B");

  // train.deterministic: LibTorch's and cuDNN's deterministic algorithms, without the autotuner
  // (it times algorithms, and a different pick gives different rounding), while the run trains.
  const Settings d = settings_while_training("graphrec", {"train.deterministic=true"});
  EXPECT_TRUE(d.deterministic_algorithms);
  EXPECT_TRUE(d.cudnn_deterministic);
  EXPECT_FALSE(d.cudnn_benchmark);
  before.expect_equal(Settings::now(), "after a deterministic run");
}

}  // namespace process_settings_test
}  // namespace plugtrain
