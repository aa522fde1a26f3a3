// `[model] init` from a .safetensors file written by Python's safetensors (Hugging Face, timm):
// its tensors are read with the values Python wrote, a run started from it is the run started
// from the same weights saved with torch.save (every logged loss, digit for digit), and a file
// that does not fit the model or is damaged stops the run in one line naming it.
// ctest-label: e2e
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "checkpoint/safetensors_file.h"
#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/metrics_csv.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain::testing {
namespace safetensors_init_test {

namespace fs = std::filesystem;

#ifdef PLUGTRAIN_PYTHON

const std::string kExperiment = testing::ExperimentToml::synthetic("st")
                                    .set("experiment.seed", 3)
                                    .unset("data.synthetic_classes")
                                    .set("data.synthetic_train_size", 400)
                                    .set("data.synthetic_test_size", 100)
                                    .set("optim.lr", 0.05)
                                    .unset("optim.momentum")
                                    .set("train.epochs", 1)
                                    .set("train.log_interval", 1)
                                    .text();

class SafetensorsInitTest : public ExperimentFolderTest {
 protected:
  SafetensorsInitTest() : ExperimentFolderTest("st_init", kExperiment) {}
  void SetUp() override {
    ExperimentFolderTest::SetUp();
    if (run_process(std::string(PLUGTRAIN_PYTHON) + " -c 'import safetensors.torch'").exit_code != 0)
      GTEST_SKIP() << "safetensors is not installed beside the torch wheel (scripts/setup installs it)";
  }
  ProcessResult python(const std::string& script) {
    std::ofstream(dir_ / "script.py") << script;
    return run_process("cd " + shell_quote(dir_.string()) + " && " + PLUGTRAIN_PYTHON + " script.py");
  }
};

// Every dtype, an empty and a 0-d tensor, in the order Python's writer lays them out (by
// alignment, not by name); each tensor's bytes as Python sees them, in hex, beside the file.
TEST_F(SafetensorsInitTest, PythonsFilesAreReadWithPythonsValues) {
  const ProcessResult py = python(R"(
import torch
from safetensors.torch import save_file
torch.manual_seed(0)
t = {
    "f32": torch.randn(3, 4), "f64": torch.randn(5, dtype=torch.float64),
    "f16": torch.randn(2, 3).half(), "bf16": torch.randn(7).bfloat16(),
    "i64": torch.tensor(-1234567890123), "i32": torch.randint(-2**31, 2**31 - 1, (4,), dtype=torch.int32),
    "i16": torch.tensor([-300, 300], dtype=torch.int16), "i8": torch.tensor([-128, 127], dtype=torch.int8),
    "u8": torch.tensor([0, 200, 255], dtype=torch.uint8), "bool": torch.tensor([True, False, True]),
    "empty": torch.empty(0, 3), "layer.0.weight": torch.randn(2, 2).t().contiguous(),
}
save_file(t, "py.safetensors", metadata={"format": "pt"})
with open("py.txt", "w") as out:
    for name, x in t.items():
        raw = x.reshape(-1).view(torch.uint8).numpy().tobytes().hex()
        print(name, str(x.dtype), "x".join(map(str, x.shape)) or "-", raw or "-", file=out)
)");
  ASSERT_EQ(py.exit_code, 0) << py.out;
  const auto read = read_safetensors(dir_ / "py.safetensors");
  std::istringstream lines(slurp(dir_ / "py.txt"));
  std::size_t count = 0;
  for (std::string name, dtype, shape, hex; lines >> name >> dtype >> shape >> hex; ++count) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(read.count(name));
    const at::Tensor& got = read.at(name);
    std::string got_shape;
    for (int64_t d : got.sizes()) got_shape += (got_shape.empty() ? "" : "x") + std::to_string(d);
    EXPECT_EQ(got_shape.empty() ? "-" : got_shape, shape);
    std::string got_hex;
    const auto* bytes = static_cast<const unsigned char*>(got.data_ptr());
    for (int64_t i = 0; i < got.numel() * int64_t(got.element_size()); ++i) {
      static const char digits[] = "0123456789abcdef";
      got_hex += digits[bytes[i] >> 4];
      got_hex += digits[bytes[i] & 15];
    }
    EXPECT_EQ(got_hex.empty() ? "-" : got_hex, hex) << dtype;
  }
  EXPECT_EQ(count, 12u);
  EXPECT_EQ(read.size(), 12u);
}

// The same weights through torch.save and through safetensors: the two runs are one.
TEST_F(SafetensorsInitTest, InitFromSafetensorsTrainsAsFromTorchSave) {
  const ProcessResult py = python(R"(
import torch, torch.nn as nn
from safetensors.torch import save_file
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)
torch.manual_seed(7)
state = MLP().state_dict()
torch.save(state, "w.pt")
save_file(dict(state), "w.safetensors")
save_file({"fc1.weight": torch.zeros(3, 3)}, "wrong.safetensors")
)");
  ASSERT_EQ(py.exit_code, 0) << py.out;
  const auto run = [&](const std::string& init) {
    return plugtrain("run exp.toml" + (init.empty() ? "" : " --set model.init=\"" + init + "\""));
  };
  const ProcessResult from_pt = run("w.pt"), from_st = run("w.safetensors"), from_scratch = run("");
  ASSERT_EQ(from_pt.exit_code, 0) << from_pt.out;
  ASSERT_EQ(from_st.exit_code, 0) << from_st.out;
  ASSERT_EQ(from_scratch.exit_code, 0) << from_scratch.out;
  EXPECT_NE(from_st.out.find("model: initialised from w.safetensors"), std::string::npos) << from_st.out;
  const auto pt_losses = step_loss_texts(run_folder(dir_, "st", 0));
  const auto st_losses = step_loss_texts(run_folder(dir_, "st", 1));
  ASSERT_EQ(pt_losses.size(), 8u);
  EXPECT_EQ(st_losses, pt_losses);
  EXPECT_NE(step_loss_texts(run_folder(dir_, "st", 2)).front(), pt_losses.front()) << "the init changed nothing";

  // The shared diagnosis of keys that do not fit, and a damaged file: one line, exit 1.
  const ProcessResult wrong = run("wrong.safetensors");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.out.find("wrong.safetensors: does not match the model: missing fc1.bias; shape of fc1.weight: "
                           "file [3, 3], model [32, 64]; missing fc2.bias; missing fc2.weight"),
            std::string::npos)
      << wrong.out;
  const std::string whole = slurp(dir_ / "w.safetensors");
  std::ofstream(dir_ / "cut.safetensors", std::ios::binary) << whole.substr(0, whole.size() - 4);
  const ProcessResult cut = run("cut.safetensors");
  EXPECT_EQ(cut.exit_code, 1);
  const auto at = cut.out.find("cut.safetensors: tensor '");
  ASSERT_NE(at, std::string::npos) << cut.out;
  const std::string line = cut.out.substr(at, cut.out.find('\n', at) - at);
  EXPECT_NE(line.find("run past the data"), std::string::npos) << cut.out;
}

#endif

}  // namespace safetensors_init_test
}  // namespace plugtrain::testing
