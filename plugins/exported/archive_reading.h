// What program.cpp (the archive and its graph) and weight_records.cpp (its weights) share in
// reading a .pt2 archive: failing with the file's name, a bounded JSON record, a tensor's shape.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <caffe2/serialize/inline_container.h>

#include "program.h"

namespace plugtrain::exported::reading {

using caffe2::serialize::PyTorchStreamReader;

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& why);

// A JSON record, its depth and the length of its long lists bounded before it is built.
nlohmann::json json_record(const std::filesystem::path& file, PyTorchStreamReader& archive, const std::string& name);

// A SymInt of the schema ({"as_int": 3} or {"as_expr": ...}): its value, or nullopt if symbolic.
std::optional<std::int64_t> fixed_size(const nlohmann::json& sym_int);

ValueShape shape_of(const std::filesystem::path& file, const std::string& what, const nlohmann::json& meta);

// The weights and constants of one archive. Each record is read once and the views on it share
// its bytes (tied weights may name one record); a view may not repeat bytes (a stride of 0), and
// the views together may claim at most twice the archive's size, since each is copied when the
// model is made: a small archive cannot make the process allocate many times its size.
class WeightReader {
 public:
  WeightReader(const std::filesystem::path& file, PyTorchStreamReader& archive);
  // The weights a config (data/weights/model_weights_config.json) lists, by name; none when the
  // archive has no such config.
  std::map<std::string, at::Tensor> read(const std::string& folder, const std::string& config_file);

 private:
  at::Tensor read_weight(const std::string& folder, const std::string& name, const nlohmann::json& entry);
  at::Tensor record(const std::string& name, c10::ScalarType dtype, const std::string& weight);

  std::filesystem::path file_;
  PyTorchStreamReader& archive_;
  std::map<std::string, at::Tensor> records_;  // record name -> its bytes (as the first dtype read)
  std::int64_t claimed_ = 0, budget_ = 0;      // the views' bytes so far, and their limit
};

}  // namespace plugtrain::exported::reading
