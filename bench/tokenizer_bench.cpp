// Tokenizing a text: plugtrain's tokenizers against Python's, the same text and the same files,
// in one invocation, rows alternating (ours, theirs, ours, theirs, ...) so machine noise hits
// both alike.
//
//   bpe  plugtrain's byte-level BPE reader (plugins/datasets/readers/bpe_tokenizer.h) against Hugging
//        Face tokenizers' Tokenizer.encode (Rust), on a tokenizer.json of GPT-2's kind that Python's
//        tokenizers trains on the text (tests/python/bpe_reference.py, 2,000 tokens).
//   spm  Debian's libsentencepiece through plugtrain's module against Python's sentencepiece, on a
//        BPE model of 2,000 pieces that plugtrain trains on the text.
// Each side encodes the whole text as one string (what the text data set does per split); the
// table gives the median seconds, tokens/s, MB/s and the ratio of the medians. Tokens must agree:
// a bench that compared different outputs would measure nothing (exit 1).
//
//   tokenizer_bench [--text FILE] [--rounds N]   (defaults: the Jargon File, 5 rounds)
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "python_peer.h"
#include "readers/bpe_tokenizer.h"
#include "readers/sentencepiece_tokenizer.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read_text(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) throw std::runtime_error(path + ": cannot be opened");
  std::string text;
  char chunk[1 << 16];
  for (int got; (got = gzread(file, chunk, sizeof chunk)) > 0;) text.append(chunk, std::size_t(got));
  gzclose(file);
  return text;
}

template <class Encode>
double timed(Encode encode, std::size_t& tokens) {
  const auto start = Clock::now();
  tokens = encode().size();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void row(const char* name, const std::vector<double>& ours, const std::vector<double>& theirs, std::size_t tokens,
         std::size_t bytes) {
  const double a = plugtrain::bench::median(ours), b = theirs.empty() ? 0 : plugtrain::bench::median(theirs);
  std::printf("%-4s %10.3f s %9.0f k tokens/s %6.1f MB/s | %10.3f s %9.0f k tokens/s | %5.2fx\n", name, a,
              double(tokens) / a / 1e3, double(bytes) / a / 1e6, b, b > 0 ? double(tokens) / b / 1e3 : 0.0,
              b > 0 ? b / a : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string text_path = "/usr/share/doc/jargon-text/jargon.txt.gz";
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--text")) text_path = argv[i + 1];
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
  }
  const fs::path work = fs::temp_directory_path() / ("tokenizer_bench." + std::to_string(::getpid()));
  fs::create_directories(work);
  const std::string text = read_text(text_path);
  std::ofstream(work / "text.txt", std::ios::binary) << text;
  // The files both sides read: Python's tokenizers trains the tokenizer.json, libsentencepiece the model.
  const std::string train_bpe = plugtrain::bench::python_executable() +
                                " " PLUGTRAIN_SOURCE_DIR "/tests/python/bpe_reference.py " +
                                (work / "text.txt").string() + " " + work.string() + " > /dev/null 2>&1";
  if (std::system(train_bpe.c_str()) != 0) {
    std::printf("python peer: skipped (tests/python/bpe_reference.py failed: tokenizers missing?)\n");
    return 0;
  }
  bundled_datasets::SentencePieceTokenizer::train((work / "text.txt").string(), (work / "spm.model").string(),
                                                  {"bpe", 2000});
  const bundled_datasets::BpeTokenizer bpe((work / "tokenizer.json").string());
  const bundled_datasets::SentencePieceTokenizer spm((work / "spm.model").string());
  plugtrain::bench::PythonPeer peer(
      "tokenizer_peer.py",
      {(work / "text.txt").string(), (work / "tokenizer.json").string(), (work / "spm.model").string()});
  std::printf("text: %s, %zu bytes; %d rounds, median; python peer: %s\n", text_path.c_str(), text.size(), rounds,
              peer.ok() ? peer.hello().dump().c_str() : ("skipped (" + peer.skipped() + ")").c_str());
  std::vector<double> bpe_ours, bpe_theirs, spm_ours, spm_theirs;
  std::size_t bpe_tokens = 0, spm_tokens = 0;
  int mismatches = 0;
  for (int r = 0; r < rounds; ++r) {
    bpe_ours.push_back(timed([&] { return bpe.encode(text); }, bpe_tokens));
    if (peer.ok()) {
      const nlohmann::json a = peer.ask("bpe");
      if (peer.ok()) bpe_theirs.push_back(a["seconds"]), mismatches += a["tokens"] != bpe_tokens;
    }
    spm_ours.push_back(timed([&] { return spm.encode(text); }, spm_tokens));
    if (peer.ok()) {
      const nlohmann::json a = peer.ask("spm");
      if (peer.ok()) spm_theirs.push_back(a["seconds"]), mismatches += a["tokens"] != spm_tokens;
    }
  }
  std::printf("%-4s %35s | %30s | %s\n", "", "plugtrain (one thread)", "python", "ours/theirs speed");
  row("bpe", bpe_ours, bpe_theirs, bpe_tokens, text.size());
  row("spm", spm_ours, spm_theirs, spm_tokens, text.size());
  std::error_code ec;
  fs::remove_all(work, ec);
  if (mismatches) std::printf("token counts differ from Python's in %d rounds\n", mismatches);
  return mismatches ? 1 : 0;
}
