// A .pt2 from anywhere (plugins/exported): hand-made hostile archives (tests/python/bad_archives.py,
// one fault each) are refused in one line naming the file, within 1 s and 100 MB of memory, and
// no fault reaches the host as a signal. The limits are the (a 1 KB file never makes the
// process allocate gigabytes); each archive is a few KB, so anything near them is a real fault.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "data/model_description.h"
#include "exported.h"
#include "exported_model.h"
#include "support/experiment_toml.h"
#include "support/run_process.h"

namespace plugtrain::exported {
namespace {

namespace fs = std::filesystem;

fs::path bad_archives() {
  static const fs::path dir = fs::temp_directory_path() / ("bad_pt2_" + std::to_string(::getpid()));
  if (fs::exists(dir / "zip_bomb.pt2")) return dir;
  const testing::ProcessResult r = testing::run_process(
      std::string(PLUGTRAIN_PYTHON) + " " PLUGTRAIN_SOURCE_DIR "/tests/python/bad_archives.py --seeds " +
      PLUGTRAIN_SOURCE_DIR "/fuzz/corpus/pt2 --out " + dir.string());
  if (r.exit_code != 0) throw std::runtime_error("bad_archives.py failed: " + r.out);
  std::atexit([] { fs::remove_all(fs::temp_directory_path() / ("bad_pt2_" + std::to_string(::getpid()))); });
  return dir;
}

// A /proc/self/status figure in bytes ("VmRSS", "VmHWM").
std::int64_t status_bytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  return -1;
}

struct Refusal {
  std::string message;  // empty: accepted
  double seconds = 0;
  std::int64_t peak_growth = 0;  // the peak resident memory above where it started, in bytes
};

// Reads, compiles and binds `file` as the plugin does for Linear(4, 3)'s data, measuring the
// time and the memory it took.
Refusal load(const fs::path& file) {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5" << std::flush;  // resets VmHWM, the peak, to the current RSS
  EXPECT_TRUE(clear_refs.good()) << "the peak memory cannot be reset: the memory check would measure the whole process";
  const std::int64_t before = status_bytes("VmRSS");
  const auto start = std::chrono::steady_clock::now();
  Refusal r;
  try {
    const ModelDescription data = image_model_description({4}, 3);
    make_exported_model(file, data.batch, data.target);
  } catch (const ProgramError& e) { r.message = e.what(); }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.peak_growth = status_bytes("VmHWM") - before;
  return r;
}

struct Case {
  const char* file;
  const char* why;  // what the one line says after "FILE: "
};

class HostileArchive : public ::testing::TestWithParam<Case> {};

TEST_P(HostileArchive, IsRefusedInOneLineWithinASecondAnd100MB) {
  const fs::path file = bad_archives() / GetParam().file;
  const Refusal r = load(file);
  EXPECT_EQ(r.message.rfind(file.string() + ": ", 0), 0u) << r.message;
  EXPECT_NE(r.message.find(GetParam().why), std::string::npos) << r.message;
  EXPECT_EQ(r.message.find('\n'), std::string::npos) << r.message;
  EXPECT_LT(r.seconds, 1.0);
  EXPECT_LT(r.peak_growth, 100 << 20) << "peak resident memory grew by " << (r.peak_growth >> 20) << " MiB";
}

INSTANTIATE_TEST_SUITE_P(
    Pt2, HostileArchive,
    ::testing::Values(
        Case{"zip_bomb.pt2", "not a readable .pt2 archive: record 'tiny/models/model.json' claims "},
        Case{"short_weight.pt2", "weight fc.weight has 20 bytes, its shape needs 48"},
        Case{"deep_json.pt2", "models/model.json: it nests deeper than 256 levels (the limit)"},
        Case{"missing_input.pt2",
             "node relu (aten::relu): reads nothing_defines_this, which no graph input or earlier "
             "node defines"},
        Case{"divide_by_constant_zero.pt2", "node floordiv (_operator.floordiv): divides by zero"},
        Case{"size_node_without_arguments.pt2",
             "node size (torch.ops.aten.sym_size.int): takes 2 arguments, the "
             "graph gives 0"},
        Case{"strides_mismatch.pt2", "weight fc.weight has 2 sizes and 1 strides"},
        Case{"shape_overflow.pt2", "weight fc.weight's shape overflows 64 bits"},
        Case{"buffer_mutation_without_value.pt2",
             "the graph's update of buffer 'fc.weight' names no value the graph "
             "computes"},
        Case{"too_many_nodes.pt2",
             "models/model.json: graph_module/graph/nodes has more than 250000 entries (the limit)"},
        Case{"stride_zero_weight.pt2", "weight fc.weight views 16000 bytes of a record of 48: it repeats bytes"},
        Case{"one_record_many_weights.pt2", "the weights claim more than "},
        Case{"reads_files.pt2", "node steal (aten::from_file): not an operator a model's graph may run"},
        Case{"huge_factory.pt2", "node zeros (aten::zeros): argument size asks for more than 67108864 elements"},
        Case{"bad_constant_input.pt2", "not a torch.export union: 5"},
        Case{"bad_weight_name.pt2",
             "the signature names weight 'fc..weight' twice, or by a name that is not a module's"},
        Case{"newline_in_names.pt2", "node re?lu (aten::relu): reads nowhere?else, which no graph input"},
        Case{"too_many_weights.pt2",
             "data/weights/model_weights_config.json: config has more than 100000 entries (the limit)"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = fs::path(info.param.file).stem().string();
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

// What only shows when the graph runs: batch // (batch - batch) is a division by zero, which as
// C++ arithmetic raises SIGFPE and kills the process. Through `plugtrain run` it is one line
// naming the file and the node, and an exit code, not a signal.
TEST(HostileArchiveRun, SizeArithmeticFaultsWhileTrainingAreOneLineAndAnExitCodeNotASignal) {
  const fs::path dir = bad_archives();
  testing::ExperimentToml hostile("hostile");
  hostile.on_cpu()
      .set_keys("model", {{"name", "exported"}, {"file", "divide_by_zero_at_run.pt2"}})
      .set_keys("data", {{"dataset", "synthetic"},
                         {"synthetic_shape", {1, 4, 4}},
                         {"synthetic_classes", 3},
                         {"synthetic_train_size", 64},
                         {"synthetic_test_size", 16},
                         {"batch_size", 16}})
      .set_keys("optim", {{"name", "sgd"}, {"lr", 0.1}})
      .set_keys("train", {{"epochs", 1}, {"memory_format", "contiguous"}})
      .write(dir / "exp.toml");
  const testing::ProcessResult r =
      testing::run_process("cd " + dir.string() + " && " + PLUGTRAIN_EXE + " run exp.toml");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // the shell gives 128 + 8 for SIGFPE
  EXPECT_NE(r.out.find("divide_by_zero_at_run.pt2: node floordiv (_operator.floordiv): divides 16 by zero"),
            std::string::npos)
      << r.out;
  // batch * 2^62 overflows 64 bits: undefined in C++, an error on that node here.
  hostile.set("model.file", "overflow_at_run.pt2").write(dir / "exp.toml");
  const testing::ProcessResult o =
      testing::run_process("cd " + dir.string() + " && " + PLUGTRAIN_EXE + " run exp.toml");
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("overflow_at_run.pt2: node mul (_operator.mul): overflows 64 bits"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace plugtrain::exported
