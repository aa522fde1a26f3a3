// The safetensors reader (`[model] init = "w.safetensors"`) on arbitrary bytes: a CheckpointError
// of one line is the expected answer to bad input; anything else, a message of several lines, or
// tensors holding more bytes than the file (an allocation the file did not pay for) is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "checkpoint/checkpoint_error.h"
#include "checkpoint/safetensors_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/plugtrain-fuzz-" + std::to_string(::getpid()) + ".safetensors";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  try {
    std::size_t bytes = 0;
    for (const auto& [name, tensor] : plugtrain::read_safetensors(path)) bytes += tensor.nbytes();
    if (bytes > size) std::abort();
  } catch (const plugtrain::CheckpointError& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
