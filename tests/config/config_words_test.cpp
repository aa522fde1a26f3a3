// Outside core/config no code compares a configuration word: validation turns every word into
// an enum (config/choices.h) or std::nullopt for "auto", so a typo cannot compile. This test
// reads every source under core/ (but core/config) and fails on `== "word"`, `!= "word"` or
// `"word" ==` for any word an experiment key chooses from, taken from the same tables the
// schema reads.
// ctest-label: unit
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/choices.h"

namespace plugtrain {
namespace config_words_test {

namespace fs = std::filesystem;

template <class E>
void add_words(std::set<std::string>& words) {
  for (const std::string& w : choice_words<E>()) words.insert(w);
}

std::set<std::string> configuration_words() {
  std::set<std::string> words = {"auto", "default"};
  add_words<BackendSelect>(words);
  add_words<Strategy>(words);
  add_words<CifarLabels>(words);
  add_words<ImageCache>(words);
  add_words<Normalize>(words);
  add_words<Augmentation>(words);
  add_words<PaddingMode>(words);
  add_words<MemoryFormatChoice>(words);
  add_words<OptimizerName>(words);
  add_words<OptimizerImpl>(words);
  add_words<LrScaling>(words);
  add_words<ScheduleName>(words);
  add_words<CheckpointSave>(words);
  add_words<Direction>(words);
  add_words<OnNonfinite>(words);
  add_words<PrecisionMode>(words);
  add_words<SweepMethod>(words);
  add_words<Distribution>(words);
  return words;
}

// Comparisons with a word that is not configuration although it is spelled like one: each with
// what it compares.
bool not_configuration(const std::string& file, const std::string& word) {
  static const std::set<std::pair<std::string, std::string>> exceptions = {
      {"distributed/device_collective.cpp", "none"},  // the SDK's Capabilities::collective
      {"train/callbacks/metrics_csv.cpp", "step"},    // a metrics.csv column
  };
  return exceptions.count({file, word}) > 0;
}

TEST(ConfigWords, NoCodeOutsideCoreConfigComparesAConfigurationWord) {
  const fs::path core = fs::path(PLUGTRAIN_SOURCE_DIR) / "core";
  const std::set<std::string> words = configuration_words();
  const std::regex comparison(R"re((?:[=!]=\s*"([^"\\]+)")|(?:"([^"\\]+)"\s*[=!]=))re");
  std::vector<std::string> found;
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(core)) {
    const fs::path& path = entry.path();
    if (path.extension() != ".cpp" && path.extension() != ".h") continue;
    const std::string relative = fs::relative(path, core).generic_string();
    if (relative.rfind("config/", 0) == 0) continue;
    ++files;
    std::ifstream in(path);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      for (std::sregex_iterator m(line.begin(), line.end(), comparison), end; m != end; ++m) {
        const std::string word = (*m)[1].matched ? (*m)[1].str() : (*m)[2].str();
        if (words.count(word) && !not_configuration(relative, word))
          found.push_back("core/" + relative + ":" + std::to_string(number) + ": compares \"" + word + "\"");
      }
    }
  }
  EXPECT_GT(files, 100u) << "the core's sources were not found under " << core;
  std::ostringstream all;
  for (const auto& f : found) all << f << "\n";
  EXPECT_TRUE(found.empty()) << "use the enum from config/choices.h instead:\n" << all.str();
}

// The test itself can fail: a comparison it must catch.
TEST(ConfigWords, TheScanFindsAComparison) {
  const std::regex comparison(R"re((?:[=!]=\s*"([^"\\]+)")|(?:"([^"\\]+)"\s*[=!]=))re");
  std::smatch m;
  const std::string line = R"(  if (e.train.precision == "fp16") return;)";
  ASSERT_TRUE(std::regex_search(line, m, comparison));
  EXPECT_EQ(m[1].str(), "fp16");
  EXPECT_TRUE(configuration_words().count("fp16"));
}

}  // namespace config_words_test
}  // namespace plugtrain
