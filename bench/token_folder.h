// A tokens folder in nanoGPT's layout (train.bin and val.bin of little-endian uint16 ids, and
// meta.json) of random ids, for the benches' GPT rows: one generator seeded 1, train drawn first,
// so every bench that asks for the same sizes trains on the same ids.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>

namespace plugtrain::bench {

inline void write_random_tokens(const std::filesystem::path& folder, std::int64_t vocab, std::int64_t train_tokens,
                                std::int64_t val_tokens) {
  std::filesystem::create_directories(folder);
  std::mt19937 rng(1);
  for (const auto& [split, count] :
       {std::pair<const char*, std::int64_t>{"train.bin", train_tokens}, {"val.bin", val_tokens}}) {
    std::ofstream out(folder / split, std::ios::binary);
    for (std::int64_t i = 0; i < count; ++i) {
      const auto id = std::uint16_t(rng() % std::uint32_t(vocab));
      out.put(char(id & 0xFF)).put(char(id >> 8));
    }
  }
  std::ofstream(folder / "meta.json") << "{\"vocab_size\": " << vocab << "}";
}

}  // namespace plugtrain::bench
