// The byte-level BPE reader (`[dataset] vocabulary = "bpe"`, a Hugging Face tokenizer.json) on
// arbitrary bytes: a refusal of one line (std::runtime_error) is the expected answer to a bad
// file; a file it accepts encodes a text of every kind of character into ids of its vocabulary.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "readers/bpe_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/plugtrain-fuzz-" + std::to_string(::getpid()) + "-tokenizer.json";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  try {
    const bundled_datasets::BpeTokenizer tokenizer(path);
    const std::string text = "Hacker's 42 \xc3\xa9t\xc3\xa9  \t\n\xe2\x80\x94 \xf0\x9f\x98\x80<|endoftext|>x";
    const std::vector<std::int64_t> ids = tokenizer.encode(text);
    for (const std::int64_t id : ids)
      if (id < 0 || id >= tokenizer.size()) std::abort();
    tokenizer.decode(ids);
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
