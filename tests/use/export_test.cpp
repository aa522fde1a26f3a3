// `plugtrain export --format safetensors`: the writer's bytes read back here field by field
// (header length, JSON header, padding, each tensor's byte range), and a real run's export
// loaded by Python's safetensors into torchvision's resnet18, equal to the torch.load export.
// ctest-label: e2e
// ctest-label SafetensorsFileTest: unit
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_error.h"
#include "checkpoint/safetensors_file.h"
#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/image_data.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace plugtrain::testing {
namespace export_test {

namespace fs = std::filesystem;

c10::ScalarType dtype_named(const std::string& code) {
  static const std::map<std::string, c10::ScalarType> types = {
      {"F32", at::kFloat}, {"F16", at::kHalf},  {"BF16", at::kBFloat16}, {"F64", at::kDouble}, {"I64", at::kLong},
      {"I32", at::kInt},   {"I16", at::kShort}, {"I8", at::kChar},       {"U8", at::kByte},    {"BOOL", at::kBool}};
  return types.at(code);
}

std::uint64_t u64_le(const std::string& bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

TEST(SafetensorsFileTest, HeaderAndDataAreLaidOutAsTheFormatSays) {
  TempDir tmp;
  const at::Tensor base = at::arange(12, at::kFloat).reshape({3, 4}) / 7;
  const std::vector<std::pair<std::string, at::Tensor>> tensors = {
      {"weight", base},
      {"weight_t", base.t()},  // not contiguous, and shares the storage of weight
      {"row", base[1]},        // a view at an offset into the same storage
      {"half", at::linspace(-2, 2, 5, at::kHalf)},
      {"bf16", at::linspace(-1, 1, 3, at::kBFloat16)},
      {"double", at::full({2, 1}, 0.1, at::kDouble)},
      {"count", at::scalar_tensor(int64_t{1234567890123}, at::kLong)},  // 0-d: shape []
      {"i32", at::tensor({-1, 2, -3}, at::kInt)},
      {"i16", at::tensor({-300, 300}, at::kShort)},
      {"i8", at::tensor({-5, 5}, at::kChar)},
      {"u8", at::tensor({0, 200, 255}, at::kByte)},
      {"mask", at::tensor({1, 0, 1}, at::kInt).to(at::kBool)},
      {"empty", at::empty({0, 3}, at::kFloat)},  // no elements: an empty byte range
  };
  const fs::path file = tmp.path() / "w.safetensors";
  write_safetensors(file, tensors);
  const std::string bytes = slurp(file);

  ASSERT_GE(bytes.size(), 8u);
  const std::uint64_t n = u64_le(bytes);
  EXPECT_EQ(n % 8, 0u) << "the header is padded so the data starts 8-byte aligned";
  ASSERT_LE(8 + n, bytes.size());
  const std::string text = bytes.substr(8, n);
  EXPECT_EQ(text.front(), '{');
  const std::size_t close = text.find_last_of('}');
  EXPECT_EQ(text.find_first_not_of(' ', close + 1), std::string::npos) << "only spaces pad the header";
  EXPECT_LT(text.size() - close - 1, 8u);
  const nlohmann::json header = nlohmann::json::parse(text);
  EXPECT_EQ(header.at("__metadata__"), nlohmann::json({{"format", "pt"}}));
  ASSERT_EQ(header.size(), tensors.size() + 1);

  // The data: every tensor's range, one after another in name order, ending where the file ends.
  const std::string data = bytes.substr(8 + n);
  std::map<std::string, at::Tensor> expected(tensors.begin(), tensors.end());
  std::uint64_t next = 0;
  for (const auto& [name, want] : expected) {  // std::map: name order, as the file's
    SCOPED_TRACE(name);
    ASSERT_TRUE(header.contains(name));
    const nlohmann::json& entry = header.at(name);
    EXPECT_EQ(entry.size(), 3u) << entry.dump();
    const auto shape = entry.at("shape").get<std::vector<int64_t>>();
    EXPECT_EQ(shape, want.sizes().vec());
    const auto range = entry.at("data_offsets").get<std::vector<std::uint64_t>>();
    ASSERT_EQ(range.size(), 2u);
    EXPECT_EQ(range[0], next) << "contiguous, in name order";
    ASSERT_LE(range[1], data.size());
    const c10::ScalarType type = dtype_named(entry.at("dtype").get<std::string>());
    EXPECT_EQ(type, want.scalar_type());
    EXPECT_EQ(range[1] - range[0], static_cast<std::uint64_t>(want.numel() * want.element_size()));
    std::string slice = data.substr(range[0], range[1] - range[0]);
    const at::Tensor got = at::from_blob(slice.data(), shape, at::TensorOptions().dtype(type)).clone();
    EXPECT_TRUE(at::equal(got, want)) << got << "\n" << want;
    next = range[1];
  }
  EXPECT_EQ(next, data.size()) << "nothing after the last tensor";
  EXPECT_EQ(header.at("empty").at("data_offsets")[0], header.at("empty").at("data_offsets")[1]);
  EXPECT_EQ(header.at("count").at("shape"), nlohmann::json::array());
}

TEST(SafetensorsFileTest, UnsupportedDtypesAndRepeatedNamesAreRefusedByName) {
  TempDir tmp;
  const fs::path file = tmp.path() / "bad.safetensors";
  const at::Tensor ok = at::ones({2});
  try {
    write_safetensors(file, {{"fine", ok}, {"phase", at::ones({2}, at::kComplexFloat)}});
    FAIL() << "a complex tensor was written";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file.string() + ": tensor 'phase': has dtype ComplexFloat"), std::string::npos) << what;
    EXPECT_NE(what.find("F32, F16, BF16"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(file)) << "nothing written";
  EXPECT_THROW(write_safetensors(file, {{"a", ok}, {"a", ok}}), CheckpointError);
  EXPECT_THROW(write_safetensors(file, {{"__metadata__", ok}}), CheckpointError);
  EXPECT_FALSE(fs::exists(file));
  write_safetensors(file, {});  // no tensors: a header with only the metadata
  const std::string bytes = slurp(file);
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes.size(), 8 + u64_le(bytes));
  EXPECT_EQ(nlohmann::json::parse(bytes.substr(8)), nlohmann::json({{"__metadata__", {{"format", "pt"}}}}));
}

class ExportTest : public ExperimentFolderTest {
 protected:
  ExportTest() : ExperimentFolderTest("export", "") {}
};

TEST_F(ExportTest, AnUnknownFormatIsOneLineAndExitsNonZero) {
  const ProcessResult r = plugtrain("export last.ckpt model.onnx --format onnx");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("plugtrain: error: ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line: " << r.out;
  EXPECT_NE(r.out.find("--format"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("onnx"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("safetensors"), std::string::npos) << "names the choices: " << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "model.onnx"));
}

#ifdef PLUGTRAIN_PYTHON
// A resnet18 run's weights, exported as safetensors (by --format and by the .safetensors name,
// the same bytes), load into torchvision's resnet18 with strict=True and run; every tensor is
// the torch.load export's, bit for bit, with its dtype.
TEST_F(ExportTest, SafetensorsLoadIntoTorchvisionAndEqualTheTorchExport) {
  const std::string python = PLUGTRAIN_PYTHON;
  if (run_process(python + " -c 'import torchvision'").exit_code != 0)
    GTEST_SKIP() << "torchvision is not installed beside the torch wheel (scripts/setup installs it)";
  if (run_process(python + " -c 'import safetensors.torch'").exit_code != 0)
    GTEST_SKIP() << "safetensors is not installed beside the torch wheel (scripts/setup installs it)";
  write_cifar10(dir_ / "c10", 8, 8);
  write_experiment(testing::ExperimentToml("ex")
                       .on_cpu()
                       .set("model.name", "resnet18")
                       .set("model.stem", "imagenet")
                       .set("data.dataset", "cifar10")
                       .set("data.path", "c10")
                       .set("data.batch_size", 8)
                       .set("optim.name", "sgd")
                       .set("optim.lr", 0.01)
                       .set("train.max_steps", 1)
                       .text());
  const ProcessResult r = plugtrain("run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string ckpt = "runs/ex/version_0/checkpoints/last.ckpt";
  const ProcessResult st = plugtrain("export " + ckpt + " weights.st --format safetensors");
  ASSERT_EQ(st.exit_code, 0) << st.out;
  EXPECT_NE(st.out.find("wrote weights.st (Python: safetensors.torch.load_file(\"weights.st\"))"), std::string::npos)
      << st.out;
  const ProcessResult by_name = plugtrain("export " + ckpt + " model.safetensors");
  ASSERT_EQ(by_name.exit_code, 0) << by_name.out;
  EXPECT_NE(by_name.out.find("safetensors.torch.load_file(\"model.safetensors\")"), std::string::npos) << by_name.out;
  EXPECT_EQ(slurp(dir_ / "model.safetensors"), slurp(dir_ / "weights.st"));
  const ProcessResult pt = plugtrain("export " + ckpt + " model.pt");
  ASSERT_EQ(pt.exit_code, 0) << pt.out;
  EXPECT_NE(pt.out.find("wrote model.pt (Python: model.load_state_dict(torch.load(\"model.pt\")))"), std::string::npos)
      << pt.out;

  std::ofstream(dir_ / "check.py") << R"(
import torch, torchvision
from safetensors.torch import load_file
st = load_file("weights.st")
pt = torch.load("model.pt")
same = st.keys() == pt.keys() and all(
    st[k].dtype == pt[k].dtype and st[k].shape == pt[k].shape and torch.equal(st[k], pt[k]) for k in pt)
m = torchvision.models.resnet18(num_classes=10)
m.load_state_dict(st, strict=True)
m.eval()
with torch.no_grad():
    y = m(torch.randn(2, 3, 32, 32))
print("KEYS", len(st), len(pt), "SAME", same, "FORWARD", tuple(y.shape), bool(torch.isfinite(y).all()))
print("BATCHES", int(st["bn1.num_batches_tracked"]), st["bn1.num_batches_tracked"].dtype)
)";
  const ProcessResult py = run_process("cd " + shell_quote(dir_.string()) + " && " + python + " check.py");
  ASSERT_EQ(py.exit_code, 0) << py.out;
  EXPECT_NE(py.out.find("KEYS 122 122 SAME True FORWARD (2, 10) True"), std::string::npos) << py.out;
  EXPECT_NE(py.out.find("BATCHES 1 torch.int64"), std::string::npos) << py.out;

  // As for the torch format: never over the checkpoint itself.
  const ProcessResult self = plugtrain("export " + ckpt + " " + ckpt + " --format safetensors");
  EXPECT_NE(self.exit_code, 0) << self.out;
  EXPECT_NE(self.out.find("is the checkpoint being exported"), std::string::npos) << self.out;
  EXPECT_NE(self.out.find("e.g. model.safetensors"), std::string::npos) << self.out;
}
#endif

}  // namespace export_test
}  // namespace plugtrain::testing
