// read_safetensors: what write_safetensors wrote comes back bitwise, and a damaged or hostile
// file (a header length past the file or of 2^63, JSON that is not JSON or nests 10,000 deep, an
// unknown dtype, a negative or overflowing shape, byte ranges past the data, of the wrong size,
// overlapping or leaving a hole) is refused in one line naming the file and the cause.
// ctest-label: unit
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "checkpoint/checkpoint_error.h"
#include "checkpoint/safetensors_file.h"
#include "support/temp_dir.h"

namespace plugtrain::testing {
namespace safetensors_read_test {

namespace fs = std::filesystem;

std::string raw_bytes(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
}

// A file of an 8-byte little-endian header length, the header as given, then the data.
fs::path write_raw(const fs::path& file, const std::string& header, const std::string& data,
                   std::uint64_t length = std::numeric_limits<std::uint64_t>::max()) {
  if (length == std::numeric_limits<std::uint64_t>::max()) length = header.size();
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes += static_cast<char>((length >> (8 * i)) & 0xff);
  std::ofstream(file, std::ios::binary) << bytes << header << data;
  return file;
}

// The refusal's message: one line, naming the file first.
std::string refusal(const fs::path& file) {
  try {
    read_safetensors(file);
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(file.string() + ": ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << file << " was read";
  return "";
}

#define EXPECT_REFUSED(file, cause)                                                              \
  do {                                                                                           \
    const std::string what_ = refusal(file);                                                     \
    EXPECT_NE(what_.find(cause), std::string::npos) << "expected: " << (cause) << "\n" << what_; \
  } while (0)

TEST(SafetensorsReadTest, WhatIsWrittenIsReadBackBitwise) {
  TempDir tmp;
  at::Tensor floats = at::tensor(
      {1.5f, -0.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 1e-45f});
  const at::Tensor base = at::arange(12, at::kDouble).reshape({3, 4}) / 7;
  const std::vector<std::pair<std::string, at::Tensor>> tensors = {
      {"f32", floats},
      {"f64_t", base.t()},  // not contiguous
      {"f16", at::linspace(-2, 2, 5, at::kHalf)},
      {"bf16", at::linspace(-1, 1, 3, at::kBFloat16)},
      {"i64", at::scalar_tensor(int64_t{-1234567890123}, at::kLong)},  // 0-d
      {"i32", at::tensor({-1, 2, std::numeric_limits<int>::min()}, at::kInt)},
      {"i16", at::tensor({-300, 300}, at::kShort).reshape({1, 2, 1})},
      {"i8", at::tensor({-128, 127}, at::kChar)},
      {"u8", at::tensor({0, 200, 255}, at::kByte)},
      {"bool", at::tensor({1, 0, 1}, at::kInt).to(at::kBool)},
      {"empty", at::empty({0, 3}, at::kFloat)},
      {"a.b.weight", at::ones({2, 2}, at::kFloat)},
  };
  const fs::path file = tmp.path() / "w.safetensors";
  write_safetensors(file, tensors);
  const auto read = read_safetensors(file);
  ASSERT_EQ(read.size(), tensors.size());
  for (const auto& [name, want] : tensors) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(read.count(name));
    const at::Tensor& got = read.at(name);
    EXPECT_EQ(got.scalar_type(), want.scalar_type());
    EXPECT_EQ(got.sizes(), want.sizes());
    EXPECT_TRUE(got.device().is_cpu());
    EXPECT_TRUE(got.is_contiguous());
    EXPECT_EQ(raw_bytes(got), raw_bytes(want));
  }
}

TEST(SafetensorsReadTest, MetadataAndAnEmptyFileAreRead) {
  TempDir tmp;
  const fs::path none = tmp.path() / "none.safetensors";
  write_safetensors(none, {});
  EXPECT_TRUE(read_safetensors(none).empty());
  // Other keys in an entry are ignored, as the reference reader does; the header may be padded.
  const fs::path extra = write_raw(tmp.path() / "extra.safetensors",
                                   R"({"__metadata__":{"format":"pt","note":"hi"},)"
                                   R"("x":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"comment":[{"a":[]}]}}   )",
                                   "\x07\x09");
  const auto read = read_safetensors(extra);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(raw_bytes(read.at("x")), "\x07\x09");
}

const std::string kEntry = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

TEST(SafetensorsReadTest, TheHeaderLengthIsCheckedAgainstTheFile) {
  TempDir tmp;
  const fs::path p = tmp.path();
  std::ofstream(p / "short.safetensors", std::ios::binary) << "abc";
  EXPECT_REFUSED(p / "short.safetensors", "not a safetensors file (3 bytes, fewer than its 8-byte header length)");
  EXPECT_REFUSED(write_raw(p / "long.safetensors", kEntry, std::string(8, '\0'), 1000),
                 "the safetensors header length is 1000 bytes, the file has " + std::to_string(kEntry.size() + 8) +
                     " after it (truncated, or not a safetensors file)");
  EXPECT_REFUSED(write_raw(p / "huge.safetensors", kEntry, "", std::uint64_t{1} << 63),
                 "the safetensors header length is 9223372036854775808 bytes, the file has");
  // Past the format's 100 MB, whatever the file holds (a sparse file: no disk used).
  const fs::path big = write_raw(p / "big.safetensors", kEntry, "", 100'000'001);
  fs::resize_file(big, 8 + 100'000'001);
  EXPECT_REFUSED(big, "the safetensors header length is 100000001 bytes, more than the format's limit of 100000000");
  EXPECT_REFUSED(p / "absent.safetensors", "no such file");
  EXPECT_REFUSED(p, "not a regular file");
}

TEST(SafetensorsReadTest, AHeaderThatIsNotFlatJsonIsRefused) {
  TempDir tmp;
  const fs::path p = tmp.path();
  EXPECT_REFUSED(write_raw(p / "text.safetensors", "{not json\n\x01\xff", ""), "the safetensors header is not JSON");
  EXPECT_REFUSED(write_raw(p / "list.safetensors", "[1, 2]", ""), "the safetensors header is not a JSON object");
  const std::string deep = R"({"t":{"x":)" + std::string(10000, '[') + std::string(10000, ']') + "}}";
  EXPECT_REFUSED(write_raw(p / "deep.safetensors", deep, ""), "the safetensors header nests deeper than 64 levels");
  EXPECT_REFUSED(write_raw(p / "deep_list.safetensors", std::string(10000, '['), ""), "not a JSON object");
  EXPECT_REFUSED(write_raw(p / "twice.safetensors",
                           R"({"t":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"t":{"dtype":"U8","shape":[0],)"
                           R"("data_offsets":[0,0]}})",
                           ""),
                 "tensor 't' is in the safetensors header twice");
  EXPECT_REFUSED(write_raw(p / "meta.safetensors", R"({"__metadata__":{"format":1}})", ""),
                 "__metadata__ 'format' is a number, not a string");
  EXPECT_REFUSED(write_raw(p / "scalar.safetensors", R"({"t":3})", ""),
                 "tensor 't' is a number, not an object with dtype, shape and data_offsets");
  EXPECT_REFUSED(write_raw(p / "partial.safetensors", R"({"t":{"dtype":"U8","shape":[0]}})", ""),
                 "tensor 't': has no data_offsets");
}

TEST(SafetensorsReadTest, EntriesAreCheckedBeforeAnythingIsAllocated) {
  TempDir tmp;
  const fs::path p = tmp.path();
  const auto entry = [&](const std::string& name, const std::string& dtype, const std::string& shape,
                         const std::string& offsets, std::size_t data) {
    return write_raw(p / name,
                     R"({"t":{"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}}",
                     std::string(data, '\0'));
  };
  EXPECT_REFUSED(entry("c64.safetensors", "C64", "[1]", "[0,8]", 8),
                 "tensor 't': dtype 'C64' is not read here (F32, F16, BF16, F64, I64, I32, I16, I8, U8 and BOOL are)");
  EXPECT_REFUSED(entry("negative.safetensors", "F32", "[2,-1]", "[0,8]", 8),
                 "tensor 't': shape holds a negative number (-1)");
  EXPECT_REFUSED(entry("elements.safetensors", "F32", "[4294967296,4294967296,4]", "[0,8]", 8),
                 "tensor 't': shape [4294967296, 4294967296, 4] has more elements than 64 bits count");
  EXPECT_REFUSED(entry("strides.safetensors", "F32", "[0,1099511627776,1099511627776]", "[0,0]", 0),
                 "tensor 't': shape [0, 1099511627776, 1099511627776] has more elements than 64 bits count");
  EXPECT_REFUSED(entry("bytes.safetensors", "F64", "[4611686018427387904]", "[0,8]", 8),
                 "tensor 't': shape [4611686018427387904] of F64 needs more bytes than 64 bits count");
  EXPECT_REFUSED(entry("dim.safetensors", "F32", "[18446744073709551616]", "[0,8]", 8),
                 "tensor 't': shape holds a fraction or too large a number (its entries are whole numbers below 2^63)");
  std::string ones = "[1";
  for (int i = 1; i < 65; ++i) ones += ",1";
  EXPECT_REFUSED(entry("dims.safetensors", "U8", ones + "]", "[0,1]", 1),
                 "tensor 't': shape has more than 64 dimensions");
  EXPECT_REFUSED(entry("past.safetensors", "F32", "[100]", "[0,400]", 8),
                 "tensor 't': data_offsets [0, 400] run past the data (8 bytes after the header)");
  EXPECT_REFUSED(entry("mismatch.safetensors", "F32", "[3]", "[0,8]", 8),
                 "tensor 't': data_offsets [0, 8] hold 8 bytes, its shape [3] of F32 needs 12");
  EXPECT_REFUSED(entry("backwards.safetensors", "F32", "[0]", "[8,0]", 8),
                 "tensor 't': data_offsets [8, 0] begin after they end");
}

TEST(SafetensorsReadTest, TensorsCoverTheDataWithoutOverlapsOrHoles) {
  TempDir tmp;
  const fs::path p = tmp.path();
  const auto two = [&](const std::string& name, const std::string& a, const std::string& b, std::size_t data) {
    return write_raw(p / name,
                     R"({"a":{"dtype":"F32","shape":[2],"data_offsets":)" + a +
                         R"(},"b":{"dtype":"F32","shape":[2],"data_offsets":)" + b + "}}",
                     std::string(data, '\0'));
  };
  EXPECT_REFUSED(two("overlap.safetensors", "[0,8]", "[4,12]", 12),
                 "tensors 'a' [0, 8] and 'b' [4, 12] overlap in the data");
  EXPECT_REFUSED(two("same.safetensors", "[0,8]", "[0,8]", 8), "overlap in the data");
  EXPECT_REFUSED(two("hole.safetensors", "[0,8]", "[12,20]", 20),
                 "bytes [8, 12] of the data belong to no tensor (a hole before 'b')");
  EXPECT_REFUSED(two("start.safetensors", "[4,12]", "[12,20]", 20),
                 "bytes [0, 4] of the data belong to no tensor (a hole before 'a')");
  EXPECT_REFUSED(two("tail.safetensors", "[0,8]", "[8,16]", 20),
                 "bytes [16, 20] of the data belong to no tensor (after the last one)");
  EXPECT_EQ(read_safetensors(two("fine.safetensors", "[8,16]", "[0,8]", 16)).size(), 2u) << "any order";
}

TEST(SafetensorsReadTest, NamesInMessagesArePrintableAndShort) {
  TempDir tmp;
  const fs::path p = tmp.path();
  const std::string what = refusal(
      write_raw(p / "newline.safetensors", R"({"a\nb\u0085c":{"dtype":"X","shape":[],"data_offsets":[0,0]}})", ""));
  EXPECT_NE(what.find(R"(tensor 'a\x0ab\xc2\x85c': dtype 'X')"), std::string::npos) << what;
  const std::string name(100000, 'n');
  const std::string long_name = refusal(
      write_raw(p / "long.safetensors", R"({")" + name + R"(":{"dtype":"X","shape":[],"data_offsets":[0,0]}})", ""));
  EXPECT_LT(long_name.size(), 300u) << long_name;
  EXPECT_NE(long_name.find("nnn...': dtype 'X'"), std::string::npos) << long_name;
}

}  // namespace safetensors_read_test
}  // namespace plugtrain::testing
