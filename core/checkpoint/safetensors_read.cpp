// read_safetensors (safetensors_file.h). The header is parsed by a SAX handler straight into one
// small entry per tensor: no JSON document is built from the untrusted text, the nesting and a
// shape's length are bounded as they open, and the entries are bounded by the header's bytes
// (each takes at least the ~50 bytes of `"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`).
// Tensors are allocated only after every entry was checked against the data's size.
#include "checkpoint/safetensors_file.h"

#include <ATen/ops/empty.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_error.h"
#include "util/text.h"

namespace plugtrain {

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // the format's own limit
constexpr std::size_t kMaxDepth = 64;                   // safetensors headers nest 3 deep
constexpr std::size_t kMaxDims = 64;

struct Dtype {
  const char* code;
  c10::ScalarType type;
};
constexpr Dtype kDtypes[] = {{"F32", c10::kFloat}, {"F16", c10::kHalf}, {"BF16", c10::kBFloat16}, {"F64", c10::kDouble},
                             {"I64", c10::kLong},  {"I32", c10::kInt},  {"I16", c10::kShort},     {"I8", c10::kChar},
                             {"U8", c10::kByte},   {"BOOL", c10::kBool}};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

struct Entry {
  std::string name;
  const Dtype* dtype = nullptr;
  std::vector<std::int64_t> shape;
  std::vector<std::uint64_t> offsets;  // [begin, end)
  std::string range() const { return "[" + std::to_string(offsets[0]) + ", " + std::to_string(offsets[1]) + "]"; }
};

// The header's JSON, checked and collected as it is parsed; every refusal throws.
class HeaderReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  HeaderReader(std::string file, std::uint64_t data_size) : file_(std::move(file)), data_size_(data_size) {}
  std::vector<Entry> entries;

  bool null() override { return scalar("null"); }
  bool boolean(bool) override { return scalar("a boolean"); }
  bool number_integer(number_integer_t value) override { return number(value < 0, static_cast<std::uint64_t>(value)); }
  bool number_unsigned(number_unsigned_t value) override { return number(false, value); }
  bool number_float(number_float_t, const string_t&) override { return scalar("a fraction or too large a number"); }
  bool string(string_t& value) override;
  bool binary(binary_t&) override { return scalar("binary"); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& name) override;
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    std::string why = e.what();
    why = why.substr(why.find(' ') + 1);  // without "[json.exception.parse_error.101]"
    fail("the safetensors header is not JSON (byte " + std::to_string(position) + "): " + printable(why, 160));
  }

  [[noreturn]] void fail(const std::string& cause) const { throw CheckpointError(file_ + ": " + cause); }
  std::string tensor() const { return "tensor '" + printable(entry_.name) + "': "; }

 private:
  enum class In { top, metadata, entry, shape, offsets, skipped };
  const std::string file_;
  const std::uint64_t data_size_;
  std::vector<In> open_;
  std::string key_;
  std::set<std::string> names_, fields_;
  Entry entry_;

  bool open(bool object);
  bool close();
  bool scalar(const std::string& what);
  bool number(bool negative, std::uint64_t value);
  void finish_entry();
};

bool HeaderReader::key(string_t& name) {
  if (open_.back() == In::top && !names_.insert(name).second)
    fail("tensor '" + printable(name) + "' is in the safetensors header twice");
  if (open_.back() == In::entry && (name == "dtype" || name == "shape" || name == "data_offsets") &&
      !fields_.insert(name).second)
    fail(tensor() + name + " is given twice");
  key_ = name;
  return true;
}

bool HeaderReader::open(bool object) {
  if (open_.size() >= kMaxDepth)
    fail("the safetensors header nests deeper than " + std::to_string(kMaxDepth) + " levels (its entries are flat)");
  if (open_.empty()) {
    if (!object) fail("the safetensors header is not a JSON object");
    open_.push_back(In::top);
    return true;
  }
  switch (open_.back()) {
    case In::top:
      if (!object) return scalar("a list");
      if (key_ == "__metadata__") {
        open_.push_back(In::metadata);
      } else {
        entry_ = Entry{key_};
        fields_.clear();
        open_.push_back(In::entry);
      }
      return true;
    case In::entry:
      if (!object && (key_ == "shape" || key_ == "data_offsets")) {
        open_.push_back(key_ == "shape" ? In::shape : In::offsets);
        return true;
      }
      if (key_ == "dtype" || key_ == "shape" || key_ == "data_offsets") return scalar(object ? "an object" : "a list");
      open_.push_back(In::skipped);  // another key: ignored, as the reference reader does
      return true;
    case In::skipped: open_.push_back(In::skipped); return true;
    default: return scalar(object ? "an object" : "a list");
  }
}

bool HeaderReader::close() {
  const In closed = open_.back();
  open_.pop_back();
  if (closed == In::entry) finish_entry();
  return true;
}

// A value that is not what its place in the header wants (or is ignored there).
bool HeaderReader::scalar(const std::string& what) {
  switch (open_.empty() ? In::top : open_.back()) {
    case In::top:
      if (open_.empty()) fail("the safetensors header is not a JSON object");
      if (key_ == "__metadata__") fail("__metadata__ is " + what + ", not a map of names to strings");
      fail("tensor '" + printable(key_) + "' is " + what + ", not an object with dtype, shape and data_offsets");
    case In::metadata: fail("__metadata__ '" + printable(key_) + "' is " + what + ", not a string");
    case In::entry:
      if (key_ == "dtype" || key_ == "shape" || key_ == "data_offsets")
        fail(tensor() + key_ + " is " + what + (key_ == "dtype" ? ", not a string" : ", not a list of whole numbers"));
      return true;
    case In::shape: fail(tensor() + "shape holds " + what + " (its entries are whole numbers below 2^63)");
    case In::offsets: fail(tensor() + "data_offsets holds " + what + " (its entries are whole numbers below 2^64)");
    case In::skipped: return true;
  }
  return true;
}

bool HeaderReader::string(string_t& value) {
  if (!open_.empty() && open_.back() == In::metadata) return true;
  if (open_.empty() || open_.back() != In::entry || key_ != "dtype") return scalar("a string");
  for (const Dtype& d : kDtypes)
    if (value == d.code) entry_.dtype = &d;
  if (!entry_.dtype)
    fail(tensor() + "dtype '" + printable(value) +
         "' is not read here (F32, F16, BF16, F64, I64, I32, I16, I8, U8 and BOOL are)");
  return true;
}

bool HeaderReader::number(bool negative, std::uint64_t value) {
  if (open_.empty() || (open_.back() != In::shape && open_.back() != In::offsets)) return scalar("a number");
  const bool shape = open_.back() == In::shape;
  const std::string list = shape ? "shape" : "data_offsets";
  if (negative) fail(tensor() + list + " holds a negative number (" + std::to_string(std::int64_t(value)) + ")");
  if (shape) {
    if (entry_.shape.size() == kMaxDims)
      fail(tensor() + "shape has more than " + std::to_string(kMaxDims) + " dimensions");
    if (value > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      fail(tensor() + "shape holds " + std::to_string(value) + ", more than a dimension can be");
    entry_.shape.push_back(std::int64_t(value));
  } else {
    if (entry_.offsets.size() == 2) fail(tensor() + "data_offsets holds more than [begin, end]");
    entry_.offsets.push_back(value);
  }
  return true;
}

// The entry's byte count, from its dtype and shape without overflow, is its data_offsets' range.
void HeaderReader::finish_entry() {
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!fields_.count(field)) fail(tensor() + "has no " + field);
  if (entry_.offsets.size() != 2) fail(tensor() + "data_offsets is not [begin, end]");
  // Counted with the empty dimensions as 1 too, as LibTorch's strides are: [0, 2^40, 2^40] holds
  // nothing, but a tensor of that shape cannot be made.
  std::int64_t elements = 1, extent = 1;
  for (std::int64_t d : entry_.shape) {
    if (__builtin_mul_overflow(extent, std::max<std::int64_t>(d, 1), &extent))
      fail(tensor() + "shape " + shape_text(entry_.shape) + " has more elements than 64 bits count");
    elements *= d;
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(std::uint64_t(elements), c10::elementSize(entry_.dtype->type), &bytes))
    fail(tensor() + "shape " + shape_text(entry_.shape) + " of " + entry_.dtype->code +
         " needs more bytes than 64 bits count");
  const std::uint64_t begin = entry_.offsets[0], end = entry_.offsets[1];
  if (begin > end) fail(tensor() + "data_offsets " + entry_.range() + " begin after they end");
  if (end > data_size_)
    fail(tensor() + "data_offsets " + entry_.range() + " run past the data (" + std::to_string(data_size_) +
         " bytes after the header)");
  if (end - begin != bytes)
    fail(tensor() + "data_offsets " + entry_.range() + " hold " + std::to_string(end - begin) + " bytes, its shape " +
         shape_text(entry_.shape) + " of " + entry_.dtype->code + " needs " + std::to_string(bytes));
  entries.push_back(std::move(entry_));
  entry_ = Entry{};
}

// The tensors, in data order, must cover the data exactly: no byte in two, none in no tensor.
void check_coverage(std::vector<Entry>& entries, std::uint64_t data_size, const HeaderReader& reader) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.offsets < b.offsets; });
  std::uint64_t covered = 0;
  const Entry* last = nullptr;
  for (const Entry& e : entries) {
    if (e.offsets[0] < covered)
      reader.fail("tensors '" + printable(last->name) + "' " + last->range() + " and '" + printable(e.name) + "' " +
                  e.range() + " overlap in the data");
    if (e.offsets[0] > covered)
      reader.fail("bytes [" + std::to_string(covered) + ", " + std::to_string(e.offsets[0]) +
                  "] of the data belong to no tensor (a hole before '" + printable(e.name) + "')");
    covered = e.offsets[1];
    last = &e;
  }
  if (covered != data_size)
    reader.fail("bytes [" + std::to_string(covered) + ", " + std::to_string(data_size) +
                "] of the data belong to no tensor (after the last one)");
}

}  // namespace

std::map<std::string, at::Tensor> read_safetensors(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw CheckpointError(file + (std::filesystem::exists(path, ec) ? ": not a regular file" : ": no such file"));
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw CheckpointError(file + ": cannot open the safetensors file");
  const auto size = static_cast<std::uint64_t>(std::max<std::streamoff>(in.tellg(), 0));
  unsigned char length_bytes[8] = {};
  if (size < 8 || !in.seekg(0).read(reinterpret_cast<char*>(length_bytes), 8))
    throw CheckpointError(file + ": not a safetensors file (" + std::to_string(size) +
                          " bytes, fewer than its 8-byte header length)");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | length_bytes[i];
  if (n > size - 8)
    throw CheckpointError(file + ": the safetensors header length is " + std::to_string(n) + " bytes, the file has " +
                          std::to_string(size - 8) + " after it (truncated, or not a safetensors file)");
  if (n > kMaxHeaderBytes)
    throw CheckpointError(file + ": the safetensors header length is " + std::to_string(n) +
                          " bytes, more than the format's limit of " + std::to_string(kMaxHeaderBytes));
  std::string header(n, '\0');
  if (!in.read(header.data(), std::streamsize(n))) throw CheckpointError(file + ": cannot read the safetensors header");

  const std::uint64_t data_size = size - 8 - n;
  HeaderReader reader(file, data_size);
  nlohmann::json::sax_parse(header, &reader);
  check_coverage(reader.entries, data_size, reader);

  // The bytes straight into the tensors: the file's little-endian order is this machine's.
  const std::uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  if (first != 1) throw CheckpointError(file + ": safetensors files are little-endian and this machine is not");
  std::map<std::string, at::Tensor> tensors;
  for (const Entry& e : reader.entries) {
    at::Tensor t;
    try {  // bounded above: the tensors hold the data's bytes, no more
      t = at::empty(e.shape, at::TensorOptions().dtype(e.dtype->type));
    } catch (const std::exception& error) {
      reader.fail("tensor '" + printable(e.name) + "' cannot be made: " + printable(error.what(), 160));
    }
    const std::uint64_t bytes = e.offsets[1] - e.offsets[0];
    if (bytes > 0 &&
        !in.seekg(std::streamoff(8 + n + e.offsets[0])).read(static_cast<char*>(t.data_ptr()), std::streamsize(bytes)))
      throw CheckpointError(file + ": the data of tensor '" + printable(e.name) +
                            "' cannot be read (the file shrank?)");
    tensors.emplace(e.name, std::move(t));
  }
  return tensors;
}

}  // namespace plugtrain
