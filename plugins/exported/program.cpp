#include "program.h"

#include <memory>

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>

#include "bounded_json.h"
#include "util/zip_records.h"

namespace plugtrain::exported {

namespace {

using caffe2::serialize::PyTorchStreamReader;
using nlohmann::json;

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& why) {
  throw ProgramError(file.string() + ": " + why);
}

std::string text_record(PyTorchStreamReader& archive, const std::string& name) {
  auto [data, size] = archive.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

// A JSON record, its depth and the length of its long lists bounded before it is built.
json json_record(const std::filesystem::path& file, PyTorchStreamReader& archive, const std::string& name) {
  if (!archive.hasRecord(name)) fail(file, "not a torch.export archive: it has no " + name);
  const JsonBounds bounds{kMaxJsonDepth,
                          {{"graph_module/graph/nodes", kMaxNodes},
                           {"graph_module/graph/tensor_values", kMaxNodes},
                           {"graph_module/signature/input_specs", kMaxWeights},
                           {"config", kMaxWeights}}};
  try {
    return parse_bounded(text_record(archive, name), bounds);
  } catch (const JsonBoundsError& e) { fail(file, name + ": " + e.what()); } catch (const json::exception& e) {
    fail(file, name + " is not valid JSON (" + e.what() + ")");
  }
}

// The archive's zip structure, checked before LibTorch's reader opens it: every record inside
// the file and no larger than it, at most kMaxRecords of them, and every CRC-32 right (LibTorch
// checks none, so a damaged weight would otherwise train).
void check_archive(const std::filesystem::path& file) {
  try {
    scan_zip_records(file, {kMaxRecords, /*check_crc=*/true});
  } catch (const ZipError& e) { fail(file, std::string("not a readable .pt2 archive: ") + e.what()); }
}

// a * b + c in 64 bits, or nullopt where it overflows.
std::optional<std::int64_t> multiply_add(std::int64_t a, std::int64_t b, std::int64_t c) {
  std::int64_t product = 0, sum = 0;
  if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(product, c, &sum)) return std::nullopt;
  return sum;
}

// A SymInt of the schema ({"as_int": 3} or {"as_expr": ...}): its value, or nullopt if symbolic.
std::optional<std::int64_t> fixed_size(const json& sym_int) {
  if (sym_int.contains("as_int")) return sym_int.at("as_int").get<std::int64_t>();
  return std::nullopt;
}

ValueShape shape_of(const std::filesystem::path& file, const std::string& what, const json& meta) {
  ValueShape shape;
  const auto dtype = scalar_type_of(meta.at("dtype").get<std::int64_t>());
  if (!dtype) fail(file, what + " has dtype code " + brief(meta.at("dtype")) + ", which plugtrain does not know");
  shape.dtype = *dtype;
  const json& sizes = meta.at("sizes");
  if (!sizes.is_array() || sizes.size() > kMaxDimensions)
    fail(file, what + " has " + std::to_string(sizes.size()) + " dimensions (the limit is " +
                   std::to_string(kMaxDimensions) + ")");
  for (const json& size : sizes) shape.sizes.push_back(fixed_size(size));
  return shape;
}

// The bytes a weight's storage must hold: up to its last element, offset + sum((size - 1) *
// stride) + 1 elements (none if it is empty), with every size, stride and product checked, so a
// hostile shape can neither overflow the count nor pass with a short record.
std::int64_t needed_bytes(const std::filesystem::path& file, const std::string& name,
                          const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                          std::int64_t offset, std::int64_t element) {
  const std::string weight = "weight " + name;
  if (strides.size() != sizes.size())
    fail(file,
         weight + " has " + std::to_string(sizes.size()) + " sizes and " + std::to_string(strides.size()) + " strides");
  if (offset < 0) fail(file, weight + " has a negative or symbolic storage offset");
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0 || strides[d] < 0) fail(file, weight + " has a negative or symbolic size or stride");
  for (const std::int64_t s : sizes)
    if (s == 0) return 0;
  std::optional<std::int64_t> needed = offset + 1;
  for (size_t d = 0; needed && d < sizes.size(); ++d) needed = multiply_add(sizes[d] - 1, strides[d], *needed);
  if (needed) needed = multiply_add(*needed, element, 0);
  if (!needed) fail(file, weight + "'s shape overflows 64 bits");
  return *needed;
}

// One weight: its storage's bytes (a file of the archive), viewed with the saved sizes and strides.
at::Tensor read_weight(const std::filesystem::path& file, PyTorchStreamReader& archive, const std::string& folder,
                       const std::string& name, const json& entry) {
  if (entry.value("use_pickle", false))
    fail(file, "weight " + name + " is stored pickled (a tensor subclass?), which plugtrain never unpickles");
  const json& meta = entry.at("tensor_meta");
  const ValueShape shape = shape_of(file, "weight " + name, meta);
  std::vector<std::int64_t> sizes, strides;
  for (const auto& s : shape.sizes) sizes.push_back(s.value_or(-1));
  for (const json& s : meta.at("strides")) strides.push_back(fixed_size(s).value_or(-1));
  const std::int64_t offset = fixed_size(meta.at("storage_offset")).value_or(0);
  const std::string record = folder + entry.at("path_name").get<std::string>();
  if (!archive.hasRecord(record)) fail(file, "weight " + name + " is missing (no " + record + ")");
  const std::int64_t bytes = std::int64_t(archive.getRecordSize(record));  // no larger than the file
  const std::int64_t element = c10::elementSize(shape.dtype);
  const std::int64_t needed = needed_bytes(file, name, sizes, strides, offset, element);
  if (bytes < needed || bytes % element != 0)
    fail(file,
         "weight " + name + " has " + std::to_string(bytes) + " bytes, its shape needs " + std::to_string(needed));
  at::Tensor storage = at::empty({bytes / element}, at::TensorOptions().dtype(shape.dtype));
  archive.getRecord(record, storage.data_ptr(), size_t(bytes));  // straight into the tensor
  return storage.as_strided(sizes, strides, offset);
}

// The weights or constants a config (data/weights/model_weights_config.json) lists, by name.
std::map<std::string, at::Tensor> read_weights(const std::filesystem::path& file, PyTorchStreamReader& archive,
                                               const std::string& folder, const std::string& config_file) {
  std::map<std::string, at::Tensor> weights;
  if (!archive.hasRecord(folder + config_file)) return weights;
  const json config = json_record(file, archive, folder + config_file);
  for (const auto& [name, entry] : config.at("config").items())
    weights[name] = read_weight(file, archive, folder, name, entry);
  return weights;
}

GraphInput input_of(const std::filesystem::path& file, const json& spec) {
  GraphInput in;
  const auto [kind, body_ptr] = union_entry(spec);
  const nlohmann::json& body = *body_ptr;
  if (kind == "user_input") {
    const json& arg = body.at("arg");
    if (!arg.contains("as_tensor")) fail(file, "a user input that is not a tensor (" + brief(arg) + ")");
    in.value = arg.at("as_tensor").at("name").get<std::string>();
  } else if (kind == "parameter") {
    in = {InputKind::parameter, body.at("arg").at("name"), body.at("parameter_name"), true, {}};
  } else if (kind == "buffer") {
    in = {InputKind::buffer, body.at("arg").at("name"), body.at("buffer_name"), body.value("persistent", true), {}};
  } else if (kind == "tensor_constant") {
    in = {InputKind::tensor_constant, body.at("arg").at("name"), body.at("tensor_constant_name"), false, {}};
  } else if (kind == "constant_input") {
    in = {InputKind::constant_input, body.at("name"), "", false, body.at("value")};
  } else {
    fail(file, "a graph input of kind " + kind + " (custom objects and tokens are not supported)");
  }
  return in;
}

GraphOutput output_of(const json& spec) {
  const auto [kind, body_ptr] = union_entry(spec);
  const nlohmann::json& body = *body_ptr;
  GraphOutput out;
  const json& arg = body.at("arg");
  if (arg.contains("as_tensor")) out.value = arg.at("as_tensor").at("name").get<std::string>();
  if (arg.contains("name")) out.value = arg.at("name").get<std::string>();
  if (kind == "user_output") out.kind = OutputKind::user_output;
  if (kind == "buffer_mutation") {
    out.kind = OutputKind::buffer_mutation;
    out.target = body.at("buffer_name").get<std::string>();
  }
  return out;
}

void check_format(const std::filesystem::path& file, PyTorchStreamReader& archive, const json& model) {
  if (archive.hasRecord("archive_format") && text_record(archive, "archive_format") != "pt2")
    fail(file, "archive format '" + text_record(archive, "archive_format") + "', not pt2");
  if (archive.hasRecord("byteorder") && text_record(archive, "byteorder") != "little")
    fail(file, "a big-endian archive (byteorder " + text_record(archive, "byteorder") + ")");
  const int major = model.at("schema_version").at("major").get<int>();
  if (major != kSchemaMajor)
    fail(file, "torch.export schema version " + std::to_string(major) + "." +
                   brief(model.at("schema_version").at("minor")) + "; plugtrain reads version " +
                   std::to_string(kSchemaMajor) + " (torch 2.5 to 2.11): export it again with torch 2.11");
}

}  // namespace

std::string one_line(const std::string& message) {
  constexpr std::size_t kLongest = 1000;
  std::string line = message.substr(0, kLongest);
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  if (message.size() > kLongest) line += "...";
  return line;
}

std::optional<c10::ScalarType> scalar_type_of(std::int64_t code) {
  using S = c10::ScalarType;
  static const std::map<std::int64_t, S> types = {{1, S::Byte},
                                                  {2, S::Char},
                                                  {3, S::Short},
                                                  {4, S::Int},
                                                  {5, S::Long},
                                                  {6, S::Half},
                                                  {7, S::Float},
                                                  {8, S::Double},
                                                  {9, S::ComplexHalf},
                                                  {10, S::ComplexFloat},
                                                  {11, S::ComplexDouble},
                                                  {12, S::Bool},
                                                  {13, S::BFloat16},
                                                  {28, S::UInt16},
                                                  {29, S::Float8_e4m3fn},
                                                  {30, S::Float8_e5m2},
                                                  {31, S::Float8_e4m3fnuz},
                                                  {32, S::Float8_e5m2fnuz}};
  const auto it = types.find(code);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

Program read_program(const std::filesystem::path& file) {
  if (!std::filesystem::is_regular_file(file)) fail(file, "no such file");
  check_archive(file);
  std::unique_ptr<PyTorchStreamReader> archive;
  try {
    archive = std::make_unique<PyTorchStreamReader>(file.string());
  } catch (const c10::Error& e) {
    // LibTorch's message goes on about checkpoints: its first sentence says what is wrong.
    const std::string why = e.what_without_backtrace();
    fail(file, "not a readable .pt2 archive (truncated?): " + why.substr(0, why.find(". ")));
  }
  Program p;
  p.file = file;
  try {
    const json model = json_record(file, *archive, "models/model.json");
    check_format(file, *archive, model);
    const json& graph_module = model.at("graph_module");
    const json& graph = graph_module.at("graph");
    for (const json& spec : graph_module.at("signature").at("input_specs")) p.inputs.push_back(input_of(file, spec));
    for (const json& spec : graph_module.at("signature").at("output_specs")) p.outputs.push_back(output_of(spec));
    p.nodes = graph.at("nodes");  // at most kMaxNodes (json_record)
    if (!p.nodes.is_array()) fail(file, "the graph's nodes are not a list");
    for (const auto& [name, meta] : graph.at("tensor_values").items()) p.shapes[name] = shape_of(file, name, meta);
    p.weights = read_weights(file, *archive, "data/weights/", "model_weights_config.json");
    p.constants = read_weights(file, *archive, "data/constants/", "model_constants_config.json");
  } catch (const json::exception& e) {
    fail(file, std::string("models/model.json does not follow torch.export's schema: ") + e.what());
  } catch (const SchemaError& e) {
    fail(file, std::string("models/model.json does not follow torch.export's schema: ") + e.what());
  } catch (const c10::Error& e) {
    fail(file, std::string("a record cannot be read (truncated?): ") + e.what_without_backtrace());
  }
  for (const GraphInput& in : p.inputs) {
    const bool weight = in.kind == InputKind::parameter || in.kind == InputKind::buffer;
    if (weight && !p.weights.count(in.target)) fail(file, "weight " + in.target + " is missing");
    if (weight && p.shapes.count(in.value)) {
      const at::Tensor& w = p.weights.at(in.target);
      const auto& expected = p.shapes.at(in.value).sizes;
      bool same = std::int64_t(expected.size()) == w.dim();
      for (size_t d = 0; same && d < expected.size(); ++d) same = !expected[d] || *expected[d] == w.size(d);
      if (!same)
        fail(file, "weight " + in.target + " has shape " + c10::str(w.sizes()) + ", the graph expects " +
                       std::to_string(expected.size()) + " dimensions as exported");
    }
    if (in.kind == InputKind::tensor_constant && !p.constants.count(in.target))
      fail(file, "constant " + in.target + " is missing");
  }
  return p;
}

}  // namespace plugtrain::exported
