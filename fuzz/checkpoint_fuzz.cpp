// The checkpoint integrity check on arbitrary bytes (a damaged or hostile .ckpt): it must
// answer with a ZipError or pass, never crash, hang or read out of bounds.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "util/zip_records.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/plugtrain-fuzz-" + std::to_string(::getpid()) + ".ckpt";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  try {
    plugtrain::scan_zip_records(path);
  } catch (const plugtrain::ZipError&) {}
  return 0;
}
