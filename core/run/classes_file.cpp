#include "run/classes_file.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

std::filesystem::path classes_file(const std::filesystem::path& run_folder) { return run_folder / "classes.json"; }

void write_classes_file(const std::filesystem::path& run_folder, const data::Dataset& train) {
  std::vector<std::string> names = train.class_names;
  if (names.empty())
    for (std::int64_t k = 0; k < train.num_classes; ++k) names.push_back(std::to_string(k));
  const nlohmann::json j = {{"num_classes", train.num_classes},
                            {"classes", names},
                            {"sample_shape", train.sample_shape},
                            {"byte_images", train.bytes()},
                            {"token_ids", train.tokens()}};
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
    if (c.sample_shape.size() != (c.token_ids ? 1u : 3u) || std::int64_t(c.names.size()) != c.num_classes)
      throw std::runtime_error("a sample shape of 3 sizes (1 for token ids) and one name per class expected");
    return c;
  } catch (const std::exception& error) {
    throw Error(file.string() + ": not the classes file a run writes (" + first_line(error.what()) + ")");
  }
}

}  // namespace plugtrain
