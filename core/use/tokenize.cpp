#include "use/tokenize.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "run/classes_file.h"
#include "use/run_tokenizer.h"
#include "use/trained_run.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

namespace {

std::string text_of(const std::filesystem::path& file) {
  if (file == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error("'" + file.string() + "': cannot be read", exit_bad_input);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The tokenizer file a run keeps (classes.json's "tokenizer").
std::filesystem::path run_tokenizer_file(const std::filesystem::path& given) {
  const TrainedFiles files = find_trained_files(given, {});
  const std::optional<RunClasses> classes =
      files.run_folder.empty() ? std::nullopt : read_classes_file(files.run_folder);
  if (!classes || classes->tokenizer_file.empty())
    throw Error("'" + given.string() +
                    "': the run keeps no tokenizer (its data set gave none: a character or byte "
                    "vocabulary, or a run of an older plugtrain); give --tokenizer",
                exit_bad_input);
  return classes->tokenizer_file;
}

}  // namespace

Tokenized tokenize_file(const TokenizeRequest& request) {
  if (request.run.empty() == request.tokenizer.empty())
    throw Error("tokenize: give either --run RUN or --tokenizer FILE", exit_bad_input);
  const std::string text = text_of(request.text);
  SearchOptions search;
  search.cli_paths = request.plugin_paths;
  const PluginHost host(search);
  const OpenedTokenizer opened =
      open_tokenizer_file(host, request.run.empty() ? request.tokenizer : run_tokenizer_file(request.run));
  const Tokenizer& tokenizer = *opened.tokenizer;
  Tokenized t;
  t.tokenizer = opened.file;
  t.dataset = opened.dataset;
  t.vocabulary = tokenizer.size();
  t.bytes = std::int64_t(text.size());
  const auto start = std::chrono::steady_clock::now();
  t.ids = tokenizer.encode(text);
  t.encode_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::int64_t id : t.ids) t.pieces.push_back(tokenizer.piece(id));
  t.round_trip = tokenizer.decode(t.ids) == text;
  return t;
}

std::string tokenized_json(const Tokenized& t) {
  const nlohmann::json j = {{"tokenizer", t.tokenizer.string()},
                            {"dataset", t.dataset},
                            {"vocabulary", t.vocabulary},
                            {"bytes", t.bytes},
                            {"tokens", t.ids.size()},
                            {"ids", t.ids},
                            {"pieces", t.pieces},
                            {"round_trip", t.round_trip},
                            {"encode_seconds", t.encode_seconds}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string tokenized_text(const Tokenized& t) {
  std::ostringstream out;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", t.ids.empty() ? 0.0 : double(t.bytes) / double(t.ids.size()));
  out << t.ids.size() << " tokens for " << t.bytes << " bytes (" << ratio << " bytes per token) with "
      << t.tokenizer.string() << " (" << t.vocabulary << " tokens, data set '" << t.dataset << "'); decoding gives "
      << (t.round_trip ? "the text back" : "ANOTHER text: the tokenizer loses something") << "\n";
  for (std::size_t i = 0; i < t.ids.size(); ++i) out << t.ids[i] << "\t" << printable(t.pieces[i]) << "\n";
  return out.str();
}

}  // namespace plugtrain
