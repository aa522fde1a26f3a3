// WeightReader (archive_reading.h): a .pt2's weights and constants, every size checked before
// anything is allocated for it.
#include <ATen/ops/empty.h>

#include <algorithm>

#include "archive_reading.h"

namespace plugtrain::exported::reading {

namespace {

using nlohmann::json;

// a * b + c in 64 bits, or nullopt where it overflows.
std::optional<std::int64_t> multiply_add(std::int64_t a, std::int64_t b, std::int64_t c) {
  std::int64_t product = 0, sum = 0;
  if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(product, c, &sum)) return std::nullopt;
  return sum;
}

// What a weight's view claims of its record: the bytes up to its last element from the record's
// start (offset + sum((size - 1) * stride) + 1 elements, or offset alone when it is empty), and
// its own bytes (numel elements). Every size, stride and product is checked, so a hostile shape
// can neither overflow the counts nor pass with a short record.
struct ViewBytes {
  std::int64_t span = 0, own = 0;
};

ViewBytes view_bytes(const std::filesystem::path& file, const std::string& name, const std::vector<std::int64_t>& sizes,
                     const std::vector<std::int64_t>& strides, std::int64_t offset, std::int64_t element) {
  const std::string weight = "weight " + name;
  if (strides.size() != sizes.size())
    fail(file,
         weight + " has " + std::to_string(sizes.size()) + " sizes and " + std::to_string(strides.size()) + " strides");
  if (offset < 0) fail(file, weight + " has a negative or symbolic storage offset");
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0 || strides[d] < 0) fail(file, weight + " has a negative or symbolic size or stride");
  const bool empty = std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
  std::optional<std::int64_t> last = empty ? std::optional<std::int64_t>(offset) : multiply_add(offset, 1, 1);
  std::optional<std::int64_t> numel = 1;
  for (size_t d = 0; !empty && last && d < sizes.size(); ++d) last = multiply_add(sizes[d] - 1, strides[d], *last);
  for (size_t d = 0; numel && d < sizes.size(); ++d) numel = multiply_add(*numel, sizes[d], 0);
  const std::optional<std::int64_t> span = last ? multiply_add(*last, element, 0) : std::nullopt;
  const std::optional<std::int64_t> own = numel ? multiply_add(*numel, element, 0) : std::nullopt;
  if (!span || !own) fail(file, weight + "'s shape overflows 64 bits");
  return {*span, *own};
}

}  // namespace

// A SymInt of the schema ({"as_int": 3} or {"as_expr": ...}): its value, or nullopt if symbolic.
std::optional<std::int64_t> fixed_size(const json& sym_int) {
  if (sym_int.contains("as_int")) return integer_of(sym_int.at("as_int"));
  return std::nullopt;
}

ValueShape shape_of(const std::filesystem::path& file, const std::string& what, const json& meta) {
  ValueShape shape;
  const auto dtype = scalar_type_of(integer_of(meta.at("dtype")));
  if (!dtype) fail(file, what + " has dtype code " + brief(meta.at("dtype")) + ", which plugtrain does not know");
  shape.dtype = *dtype;
  const json& sizes = meta.at("sizes");
  if (!sizes.is_array()) fail(file, what + "'s sizes are not a list");
  if (sizes.size() > kMaxDimensions)
    fail(file, what + " has " + std::to_string(sizes.size()) + " dimensions (the limit is " +
                   std::to_string(kMaxDimensions) + ")");
  for (const json& size : sizes) shape.sizes.push_back(fixed_size(size));
  return shape;
}

WeightReader::WeightReader(const std::filesystem::path& file, PyTorchStreamReader& archive)
    : file_(file), archive_(archive) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  budget_ = ec ? 0 : 2 * std::int64_t(size);
}

std::map<std::string, at::Tensor> WeightReader::read(const std::string& folder, const std::string& config_file) {
  std::map<std::string, at::Tensor> weights;
  if (!archive_.hasRecord(folder + config_file)) return weights;
  const json config = json_record(file_, archive_, folder + config_file);  // at most kMaxWeights entries
  for (const auto& [name, entry] : config.at("config").items()) weights[name] = read_weight(folder, name, entry);
  return weights;
}

// One weight: its record's bytes viewed with the saved sizes and strides.
at::Tensor WeightReader::read_weight(const std::string& folder, const std::string& name, const json& entry) {
  if (entry.value("use_pickle", false))
    fail(file_, "weight " + name + " is stored pickled (a tensor subclass?), which plugtrain never unpickles");
  const json& meta = entry.at("tensor_meta");
  const ValueShape shape = shape_of(file_, "weight " + name, meta);
  std::vector<std::int64_t> sizes, strides;
  for (const auto& s : shape.sizes) sizes.push_back(s.value_or(-1));
  if (!meta.at("strides").is_array()) fail(file_, "weight " + name + "'s strides are not a list");
  for (const json& s : meta.at("strides")) strides.push_back(fixed_size(s).value_or(-1));
  const std::int64_t offset = fixed_size(meta.at("storage_offset")).value_or(-1);
  const std::string record_name = folder + entry.at("path_name").get<std::string>();
  if (!archive_.hasRecord(record_name)) fail(file_, "weight " + name + " is missing (no " + record_name + ")");
  const std::int64_t bytes = std::int64_t(archive_.getRecordSize(record_name));  // no larger than the file
  const std::int64_t element = c10::elementSize(shape.dtype);
  const ViewBytes view = view_bytes(file_, name, sizes, strides, offset, element);
  if (bytes < view.span || bytes % element != 0)
    fail(file_,
         "weight " + name + " has " + std::to_string(bytes) + " bytes, its shape needs " + std::to_string(view.span));
  if (view.own > bytes)
    fail(file_, "weight " + name + " views " + std::to_string(view.own) + " bytes of a record of " +
                    std::to_string(bytes) + ": it repeats bytes (a stride of 0), which no saved weight does");
  if (__builtin_add_overflow(claimed_, view.own, &claimed_) || claimed_ > budget_)
    fail(file_, "the weights claim more than " + std::to_string(budget_) +
                    " bytes, twice the archive's size (records named by many weights?)");
  return record(record_name, shape.dtype, name).as_strided(sizes, strides, offset);
}

// A record's bytes, read once (straight into the tensor) however many weights view it.
at::Tensor WeightReader::record(const std::string& name, c10::ScalarType dtype, const std::string& weight) {
  const auto read = records_.find(name);
  if (read != records_.end()) {
    if (read->second.scalar_type() != dtype)
      fail(file_, "weight " + weight + " reads " + name + " as another dtype than an earlier weight");
    return read->second;
  }
  const std::int64_t bytes = std::int64_t(archive_.getRecordSize(name));
  const std::int64_t elements = bytes / std::int64_t(c10::elementSize(dtype));
  at::Tensor storage = at::empty({elements}, at::TensorOptions().dtype(dtype));
  archive_.getRecord(name, storage.data_ptr(), size_t(bytes));
  records_.emplace(name, storage);
  return storage;
}

}  // namespace plugtrain::exported::reading
