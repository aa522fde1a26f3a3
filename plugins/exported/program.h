// A torch.export program as plugtrain reads it from a .pt2 archive (torch.export.save): the
// graph (nodes in execution order, each an ATen operator or a size computation), its signature
// (which graph inputs are parameters, buffers, constants or the user's inputs; which outputs are
// the user's) and its weights under the Python module's own names. Read without Python and
// without unpickling anything: the archive's pickled sample inputs are never opened.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

namespace plugtrain::exported {

// One line naming the file (and the node and operator where there is one), for the user. The
// names in it come from the archive: control characters are replaced and a long line is cut, so
// that a hostile file cannot write several lines or megabytes of message.
std::string one_line(const std::string& message);

class ProgramError : public std::runtime_error {
 public:
  explicit ProgramError(const std::string& message) : std::runtime_error(one_line(message)) {}
};

// What does not follow torch.export's schema, without the file's name: the reader and the
// compiler catch it and say which file.
class SchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What an archive may claim, each checked before anything is allocated for it: an archive made
// to exhaust memory (a zip bomb, a billion nodes, JSON nested to overflow a stack) is refused in
// one line. Real programs stay far inside them (a GPT-2 XL export: ~600 weights, ~6,000 nodes).
// The weights together may claim at most twice the archive's bytes (tied weights may share a
// record), and no weight may repeat its bytes (a stride of 0): the copies made of the weights
// would otherwise multiply a small file.
inline constexpr std::uint64_t kMaxRecords = 100'000;
inline constexpr std::size_t kMaxNodes = 250'000;
inline constexpr std::size_t kMaxWeights = 100'000;
inline constexpr int kMaxJsonDepth = 256;
inline constexpr std::size_t kMaxDimensions = 64;
// A size fixed in the graph (a causal mask's ones([T, T]), a repeat): 2^26 elements, a mask of
// 8192 x 8192, 256 MB of float.
inline constexpr std::int64_t kMaxConstantElements = std::int64_t{1} << 26;

// A graph value's shape as exported: a fixed size, or nullopt for a symbolic one (a dynamic
// dimension such as the batch).
struct ValueShape {
  c10::ScalarType dtype = c10::ScalarType::Float;
  std::vector<std::optional<std::int64_t>> sizes;
};

enum class InputKind { user_input, parameter, buffer, tensor_constant, constant_input };

struct GraphInput {
  InputKind kind = InputKind::user_input;
  std::string value;        // the graph's name for it ("p_conv1_weight", "x")
  std::string target;       // the module's name for it ("conv1.weight"); user inputs: empty
  bool persistent = true;   // a buffer in the state_dict (register_buffer(persistent=True))
  nlohmann::json constant;  // constant_input: its value
};

enum class OutputKind { user_output, buffer_mutation, other };

struct GraphOutput {
  OutputKind kind = OutputKind::other;
  std::string value;   // empty: not a tensor (a user output that is a constant)
  std::string target;  // buffer_mutation: the buffer
};

struct Program {
  std::filesystem::path file;
  std::vector<GraphInput> inputs;
  std::vector<GraphOutput> outputs;
  nlohmann::json nodes;  // the graph's nodes, in order (compiled by GraphProgram)
  std::map<std::string, ValueShape> shapes;
  // Parameters and persistent or not buffers by the module's names, tensor constants by theirs:
  // on the CPU, as saved.
  std::map<std::string, at::Tensor> weights;
  std::map<std::string, at::Tensor> constants;
};

// The schema versions this reader knows: torch.export's serialisation schema 8.x (torch 2.5
// through 2.11 write it).
inline constexpr int kSchemaMajor = 8;

// Throws ProgramError: a file that is missing, truncated, not a .pt2 archive, of another schema
// version, over a limit above, or with a missing, misshapen or pickled weight.
Program read_program(const std::filesystem::path& file);

// A JSON value as a message quotes it: short, and any invalid UTF-8 replaced (dump() would throw).
inline std::string brief(const nlohmann::json& value) {
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() <= 120 ? text : text.substr(0, 117) + "...";
}

// An integer of the schema, or SchemaError: nlohmann's get<std::int64_t>() would convert a float
// such as 1e300, which is undefined behaviour.
inline std::int64_t integer_of(const nlohmann::json& value) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
    throw SchemaError("the integer " + brief(value) + " does not fit 64 bits");
  if (!value.is_number_integer()) throw SchemaError("expected an integer, got " + brief(value));
  return value.get<std::int64_t>();
}

inline std::vector<std::int64_t> integers_of(const nlohmann::json& value) {
  if (!value.is_array()) throw SchemaError("expected a list of integers, got " + brief(value));
  std::vector<std::int64_t> out;
  out.reserve(value.size());
  for (const nlohmann::json& v : value) out.push_back(integer_of(v));
  return out;
}

// A union of torch.export's schema ({"as_tensor": {...}}): its one key and value.
inline std::pair<std::string, const nlohmann::json*> union_entry(const nlohmann::json& value) {
  if (!value.is_object() || value.size() != 1) throw SchemaError("not a torch.export union: " + brief(value));
  const auto it = value.begin();
  return {it.key(), &it.value()};
}

// The c10 dtype of torch.export's serialised ScalarType code, or nullopt for an unknown code.
std::optional<c10::ScalarType> scalar_type_of(std::int64_t code);

}  // namespace plugtrain::exported
