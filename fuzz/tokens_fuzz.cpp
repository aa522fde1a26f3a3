// The tokens data set's reader (nanoGPT's layout) on arbitrary bytes: the input is
//   meta.json SEP train.bin SEP val.bin      (SEP the line "\n%%\n")
// written into a folder the reader is pointed at. Its errors are std::runtime_error lines
// naming the file; anything else escaping is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "readers/path_query.h"
#include "readers/text_corpus.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string folder = "/tmp/plugtrain-fuzz-" + std::to_string(::getpid()) + "-tokens";
  static const bool made = std::filesystem::create_directories(folder);
  (void)made;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string separator = "\n%%\n";
  std::size_t from = 0;
  for (const char* file : {"meta.json", "train.bin", "val.bin"}) {
    const std::size_t at = std::min(input.find(separator, from), input.size());
    std::ofstream(folder + "/" + file, std::ios::binary | std::ios::trunc) << input.substr(from, at - from);
    from = std::min(at + separator.size(), input.size());
  }
  const plugtrain::Options options({{"val_fraction", 0.1},
                                    {"context", std::int64_t{4}},
                                    {"eval_stride", std::int64_t{0}},
                                    {"val_windows", std::int64_t{0}},
                                    {"tokenizer", std::string()}});
  try {
    bundled_datasets::read_tokens(bundled_datasets::PathQuery(folder), options);
  } catch (const std::runtime_error&) {}
  return 0;
}
