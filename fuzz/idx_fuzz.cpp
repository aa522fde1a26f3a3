// The IDX reader (MNIST's file format) on arbitrary bytes, plain and gzip-wrapped by the name:
// a DataError is the expected answer to bad input, anything else is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "data/data_error.h"
#include "readers/idx_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/plugtrain-fuzz-" + std::to_string(::getpid()) + "-idx";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  try {
    plugtrain::data::read_idx(path);
  } catch (const plugtrain::data::DataError&) {
  }
  return 0;
}
