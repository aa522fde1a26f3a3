#include "program.h"

#include <memory>
#include <set>

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>

#include "archive_reading.h"
#include "bounded_json.h"
#include "util/zip_records.h"

namespace plugtrain::exported {

namespace reading {

using nlohmann::json;

void fail(const std::filesystem::path& file, const std::string& why) { throw ProgramError(file.string() + ": " + why); }

json json_record(const std::filesystem::path& file, PyTorchStreamReader& archive, const std::string& name) {
  if (!archive.hasRecord(name)) fail(file, "not a torch.export archive: it has no " + name);
  const JsonBounds bounds{kMaxJsonDepth,
                          {{"graph_module/graph/nodes", kMaxNodes},
                           {"graph_module/graph/tensor_values", kMaxNodes},
                           {"graph_module/signature/input_specs", kMaxWeights},
                           {"config", kMaxWeights}}};
  try {
    const auto [data, size] = archive.getRecord(name);  // no larger than the file (scan_zip_records)
    return parse_bounded(std::string(static_cast<const char*>(data.get()), size), bounds);
  } catch (const JsonBoundsError& e) { fail(file, name + ": " + e.what()); } catch (const json::exception& e) {
    fail(file, name + " is not valid JSON (" + e.what() + ")");
  }
}

}  // namespace reading

namespace {

using namespace reading;

std::string text_record(PyTorchStreamReader& archive, const std::string& name) {
  auto [data, size] = archive.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

// The archive's zip structure, checked before LibTorch's reader opens it: every record inside
// the file and no larger than it, at most kMaxRecords of them, and every CRC-32 right (LibTorch
// checks none, so a damaged weight would otherwise train).
void check_archive(const std::filesystem::path& file) {
  try {
    scan_zip_records(file, {kMaxRecords, /*check_crc=*/true});
  } catch (const ZipError& e) { fail(file, std::string("not a readable .pt2 archive: ") + e.what()); }
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
  const std::int64_t major = integer_of(model.at("schema_version").at("major"));
  if (major != kSchemaMajor)
    fail(file, "torch.export schema version " + std::to_string(major) + "." +
                   brief(model.at("schema_version").at("minor")) + "; plugtrain reads version " +
                   std::to_string(kSchemaMajor) + " (torch 2.5 to 2.11): export it again with torch 2.11");
}

// The module's name for a weight ("features.0.weight"): non-empty parts between dots, as the
// model's modules are made from it.
bool module_name(const std::string& target) {
  if (target.empty() || target.front() == '.' || target.back() == '.') return false;
  return target.find("..") == std::string::npos;
}

// Every weight and constant the signature names is in the archive, once, under a usable name,
// with the shape the graph was exported with.
void check_inputs(const Program& p) {
  const std::filesystem::path& file = p.file;
  std::set<std::string> targets;
  for (const GraphInput& in : p.inputs) {
    const bool weight = in.kind == InputKind::parameter || in.kind == InputKind::buffer;
    if ((weight || in.kind == InputKind::tensor_constant) &&
        (!module_name(in.target) || !targets.insert(in.target).second))
      fail(file, "the signature names weight '" + in.target + "' twice, or by a name that is not a module's");
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
  } catch (const std::exception& e) {  // LibTorch's reader lets a few of the standard library's through
    fail(file, std::string("not a readable .pt2 archive: ") + e.what());
  }
  Program p;
  p.file = file;
  try {
    json model = json_record(file, *archive, "models/model.json");
    check_format(file, *archive, model);
    json& graph_module = model.at("graph_module");
    json& graph = graph_module.at("graph");
    for (const json& spec : graph_module.at("signature").at("input_specs")) p.inputs.push_back(input_of(file, spec));
    for (const json& spec : graph_module.at("signature").at("output_specs")) p.outputs.push_back(output_of(spec));
    p.nodes = std::move(graph.at("nodes"));  // at most kMaxNodes (json_record); moved, not copied
    if (!p.nodes.is_array()) fail(file, "the graph's nodes are not a list");
    for (const auto& [name, meta] : graph.at("tensor_values").items()) p.shapes[name] = shape_of(file, name, meta);
    WeightReader weights(file, *archive);
    p.weights = weights.read("data/weights/", "model_weights_config.json");
    p.constants = weights.read("data/constants/", "model_constants_config.json");
  } catch (const json::exception& e) {
    fail(file, std::string("models/model.json does not follow torch.export's schema: ") + e.what());
  } catch (const SchemaError& e) {
    fail(file, std::string("models/model.json does not follow torch.export's schema: ") + e.what());
  } catch (const c10::Error& e) {
    fail(file, std::string("a record cannot be read (truncated?): ") + e.what_without_backtrace());
  }
  check_inputs(p);
  return p;
}

}  // namespace plugtrain::exported
