// The CIFAR reader on arbitrary bytes given as the downloaded archive: libarchive's tar/gzip
// parsing and the record checks behind it. A DataError is the expected answer to bad input,
// anything else is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "readers/cifar.h"
#include "data/data_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/plugtrain-fuzz-" + std::to_string(::getpid()) + "-cifar.tar.gz";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  for (auto kind : {plugtrain::data::CifarKind::cifar10, plugtrain::data::CifarKind::cifar100}) {
    try {
      plugtrain::data::load_cifar(path, kind, plugtrain::CifarLabels::coarse);
    } catch (const plugtrain::data::DataError&) {
    }
  }
  return 0;
}
