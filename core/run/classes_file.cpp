#include "run/classes_file.h"

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

std::filesystem::path classes_file(const std::filesystem::path& run_folder) { return run_folder / "classes.json"; }

namespace {

std::string file_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error("'" + file.string() + "': cannot be read");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The run's copy of the tokenizer its token ids came from, "tokenizer" with the file's own
// extension (tokenizer.json, tokenizer.model). A resumed run must read its text with the same
// tokenizer: another one gives other ids for the same text, and the weights would be trained on
// a vocabulary that means something else. Returns the copy's name.
std::string keep_tokenizer(const std::filesystem::path& run_folder, const std::string& tokenizer_file) {
  const std::filesystem::path copy =
      run_folder / ("tokenizer" + std::filesystem::path(tokenizer_file).extension().string());
  const std::string bytes = file_bytes(tokenizer_file);
  std::error_code ec;
  if (std::filesystem::exists(copy, ec)) {
    if (file_bytes(copy) != bytes)
      throw Error("'" + tokenizer_file + "' is not the tokenizer this run was trained with (" + copy.string() +
                      "): resume with the same [dataset] tokenizer, or start a new run",
                  exit_bad_input);
    return copy.filename().string();
  }
  write_file_atomically(copy, bytes);
  return copy.filename().string();
}

}  // namespace

void write_classes_file(const std::filesystem::path& run_folder, const data::Dataset& train) {
  std::vector<std::string> names = train.class_names;
  if (names.empty())
    for (std::int64_t k = 0; k < train.num_classes; ++k) names.push_back(std::to_string(k));
  nlohmann::json j = {{"num_classes", train.num_classes},
                      {"classes", names},
                      {"sample_shape", train.sample_shape},
                      {"byte_images", train.bytes()},
                      {"token_ids", train.tokens()}};
  if (!train.tokenizer_file.empty()) {
    j["tokenizer"] = keep_tokenizer(run_folder, train.tokenizer_file);
    j["tokenizer_source"] = train.tokenizer_file;
  }
  write_file_atomically(classes_file(run_folder), j.dump(2) + "\n");
}

std::optional<RunClasses> read_classes_file(const std::filesystem::path& run_folder) {
  const std::filesystem::path file = classes_file(run_folder);
  std::ifstream in(file);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    RunClasses c;
    c.num_classes = j.at("num_classes").get<std::int64_t>();
    c.names = j.at("classes").get<std::vector<std::string>>();
    c.sample_shape = j.at("sample_shape").get<std::vector<std::int64_t>>();
    c.byte_images = j.at("byte_images").get<bool>();
    c.token_ids = j.value("token_ids", false);
    if (j.contains("tokenizer")) c.tokenizer_file = run_folder / j.at("tokenizer").get<std::string>();
    if (c.sample_shape.size() != (c.token_ids ? 1u : 3u) || std::int64_t(c.names.size()) != c.num_classes)
      throw std::runtime_error("a sample shape of 3 sizes (1 for token ids) and one name per class expected");
    return c;
  } catch (const std::exception& error) {
    throw Error(file.string() + ": not the classes file a run writes (" + first_line(error.what()) + ")");
  }
}

}  // namespace plugtrain
