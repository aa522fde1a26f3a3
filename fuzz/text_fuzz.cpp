// The text data set's reader on arbitrary bytes, plain or gzip (by its magic, as gzread does),
// with a character and then a byte vocabulary. Its errors are std::runtime_error lines naming
// the file; anything else escaping is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "readers/path_query.h"
#include "readers/text_corpus.h"

namespace {

plugtrain::Options options(const std::string& vocabulary) {
  return plugtrain::Options({{"vocabulary", vocabulary},
                             {"val_fraction", 0.1},
                             {"context", std::int64_t{8}},
                             {"eval_stride", std::int64_t{0}},
                             {"val_windows", std::int64_t{0}}});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/plugtrain-fuzz-" + std::to_string(::getpid()) + ".txt";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  for (const char* vocabulary : {"char", "byte"}) {
    try {
      bundled_datasets::read_text(bundled_datasets::PathQuery(path), options(vocabulary));
    } catch (const std::runtime_error&) {}
  }
  return 0;
}
