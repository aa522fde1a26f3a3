#include "logging/tensorboard_writer.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "logging/protobuf_wire.h"
#include "util/error.h"

namespace plugtrain {

namespace {

using namespace wire;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Event { double wall_time = 1; int64 step = 2; oneof what { string file_version = 3; Summary summary = 5; } }
std::string event(double wall_time, std::int64_t step) {
  std::string e;
  field_double(e, 1, wall_time);
  field_int64(e, 2, step);
  return e;
}

std::uint32_t masked(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

const std::array<std::uint32_t, 256>& crc32c_table() {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;  // reflected Castagnoli
      t[i] = c;
    }
    return t;
  }();
  return table;
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t size) {
  const auto& table = crc32c_table();
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < size; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

TensorBoardWriter::TensorBoardWriter(const std::filesystem::path& folder, const std::string& file_name) {
  std::filesystem::create_directories(folder);
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  file_ = folder / (!file_name.empty() ? file_name
                                       : "events.out.tfevents." + std::to_string(std::int64_t(now_seconds())) + "." +
                                             host + "." + std::to_string(::getpid()) + ".plugtrain");
  out_.open(file_, std::ios::binary);
  if (!out_) throw Error(file_.string() + ": cannot create the TensorBoard event file");
  std::string first = event(now_seconds(), 0);
  field_bytes(first, 3, "brain.Event:2");
  write_event(first);
  flush();
}

void TensorBoardWriter::add_scalar(const std::string& name, double value, std::int64_t step) {
  // Summary { repeated Value value = 1; }  Value { string tag = 1; float simple_value = 2; }
  std::string v;
  field_bytes(v, 1, name);
  field_float(v, 2, float(value));
  std::string summary;
  field_bytes(summary, 1, v);
  std::string e = event(now_seconds(), step);
  field_bytes(e, 5, summary);
  write_event(e);
}

void TensorBoardWriter::add_plugin_summary(const std::string& name, const std::string& plugin_name,
                                           const std::string& content, std::int64_t step) {
  // SummaryMetadata { PluginData plugin_data = 1; }  PluginData { string plugin_name = 1; bytes content = 2; }
  std::string plugin_data;
  field_bytes(plugin_data, 1, plugin_name);
  field_bytes(plugin_data, 2, content);
  std::string metadata;
  field_bytes(metadata, 1, plugin_data);
  // TensorProto { DataType dtype = 1 (DT_FLOAT = 1); TensorShapeProto tensor_shape = 2 { Dim dim = 2 {} } }:
  // an empty float vector, TensorBoard's own "null tensor".
  std::string dim, shape, tensor;
  field_bytes(shape, 2, dim);
  field_int64(tensor, 1, 1);
  field_bytes(tensor, 2, shape);
  // Summary.Value { string tag = 1; TensorProto tensor = 8; SummaryMetadata metadata = 9; }
  std::string v;
  field_bytes(v, 1, name);
  field_bytes(v, 8, tensor);
  field_bytes(v, 9, metadata);
  std::string summary;
  field_bytes(summary, 1, v);
  std::string e = event(now_seconds(), step);
  field_bytes(e, 5, summary);
  write_event(e);
}

void TensorBoardWriter::write_event(const std::string& payload) {
  const std::uint64_t length = payload.size();
  char header[8];
  std::memcpy(header, &length, 8);  // little-endian
  const std::uint32_t length_crc = masked(crc32c(header, 8));
  const std::uint32_t data_crc = masked(crc32c(payload.data(), payload.size()));
  out_.write(header, 8);
  out_.write(reinterpret_cast<const char*>(&length_crc), 4);
  out_.write(payload.data(), std::streamsize(payload.size()));
  out_.write(reinterpret_cast<const char*>(&data_crc), 4);
}

void TensorBoardWriter::flush() { out_.flush(); }

}  // namespace plugtrain
