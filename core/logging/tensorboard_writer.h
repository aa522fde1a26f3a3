// TensorBoard event files with scalar summaries, readable by the real TensorBoard.
//
// Format: a TFRecord stream (length, masked CRC32C of the length, payload, masked CRC32C of
// the payload) of `tensorflow.Event` protobuf messages. The few fields needed are encoded
// here by hand on purpose: libtorch_cpu.so exports its own bundled protobuf (232 symbols), and
// loading Debian's libprotobuf into the same process would let two protobuf versions
// interpose on each other. Field numbers follow tensorflow/core/util/event.proto and
// tensorflow/core/framework/summary.proto.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace plugtrain {

class TensorBoardWriter {
 public:
  // `file_name`: empty for a new events.out.tfevents.<time>.<host>.<pid> file; else this
  // name in `folder`, written anew (for summaries that are rewritten whole, e.g. hparams).
  explicit TensorBoardWriter(const std::filesystem::path& folder, const std::string& file_name = "");
  void add_scalar(const std::string& tag, double value, std::int64_t step);
  // A summary that only carries a plugin's data (tensor left empty), as TensorBoard's plugins
  // (hparams) write theirs.
  void add_plugin_summary(const std::string& tag, const std::string& plugin_name, const std::string& content,
                          std::int64_t step = 0);
  void flush();
  const std::filesystem::path& file() const { return file_; }

 private:
  void write_event(const std::string& event);
  std::filesystem::path file_;
  std::ofstream out_;
};

// CRC-32C (Castagnoli), as TFRecord framing needs.
std::uint32_t crc32c(const void* data, std::size_t size);

}  // namespace plugtrain
