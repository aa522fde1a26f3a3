// The text data sets' reader (plugins/datasets/readers/text_corpus.cpp) and the loader on token
// windows: the windows are views of one stream (no copy per window), each target is its window
// moved on by one token, characters are whole UTF-8 code points, and a batch gathers exactly the
// windows its samples name.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "data/batch_loader.h"
#include "readers/path_query.h"
#include "readers/text_corpus.h"
#include "support/temp_dir.h"

namespace plugtrain {
namespace {

Options text_options(const std::string& vocabulary, std::int64_t context, double val_fraction = 0.1) {
  return Options(std::map<std::string, OptionValue>{{"context", context},
                                                    {"eval_stride", std::int64_t{0}},
                                                    {"val_windows", std::int64_t{0}},
                                                    {"vocabulary", vocabulary},
                                                    {"val_fraction", val_fraction}});
}

TEST(TextCorpus, ByteWindowsAreViewsOfOneStreamAndTheirTargetsFollowByOneToken) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 100; ++i) text += char('a' + i % 26);
  std::ofstream(dir.path() / "t.txt") << text;
  const DatasetRead read = bundled_datasets::read_text(bundled_datasets::PathQuery((dir.path() / "t.txt").string()),
                                                       text_options("byte", 8));
  EXPECT_EQ(read.num_classes, 256);
  EXPECT_EQ(read.class_names[std::size_t('a')], "a");
  EXPECT_EQ(read.class_names[0], "<0x00>");
  const at::Tensor& x = read.train.inputs;
  const at::Tensor& y = read.train.targets;
  ASSERT_EQ(x.dim(), 2);
  EXPECT_EQ(x.size(0), 90 - 8);  // the first 90 bytes train: a window at every offset with a next token
  EXPECT_EQ(x.size(1), 8);
  EXPECT_EQ(x.storage().nbytes(), 90u * sizeof(std::int64_t)) << "one stream, not a copy per window";
  EXPECT_TRUE(at::equal(x.narrow(1, 1, 7), y.narrow(1, 0, 7)));
  EXPECT_EQ(x[5][0].item<std::int64_t>(), 'a' + 5);
  EXPECT_EQ(y[5][7].item<std::int64_t>(), 'a' + 13);
  // The val split (the last 10 bytes): windows one after another, context apart.
  EXPECT_EQ(read.validation.inputs.size(0), 1);
  EXPECT_EQ(read.validation.inputs[0][0].item<std::int64_t>(), 'a' + 90 % 26);
}

TEST(TextCorpus, CharactersAreWholeCodePointsOfTheTrainingSplitInCodePointOrder) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 20; ++i) text += "caf\xC3\xA9 \xE2\x9C\x93 ";  // "café ✓ ": é is 2 bytes, ✓ 3
  text += "zzzzzzzzzz";                                              // z only in the val split
  std::ofstream(dir.path() / "t.txt") << text;
  const DatasetRead read = bundled_datasets::read_text(bundled_datasets::PathQuery((dir.path() / "t.txt").string()),
                                                       text_options("char", 4, 0.1));
  const std::vector<std::string> expected = {" ", "a", "c", "f", "\xC3\xA9", "\xE2\x9C\x93"};
  EXPECT_EQ(read.class_names, expected);
  EXPECT_EQ(read.num_classes, 6);
  ASSERT_EQ(read.notes.size(), 1u);
  EXPECT_NE(read.notes[0].find("val characters outside it left out"), std::string::npos) << read.notes[0];
  // "café ✓ " is 7 characters: c a f é ' ' ✓ ' '
  const std::vector<std::int64_t> first = {2, 1, 3, 4};
  for (std::int64_t t = 0; t < 4; ++t) EXPECT_EQ(read.train.inputs[0][t].item<std::int64_t>(), first[std::size_t(t)]);
}

TEST(TextCorpus, TheLoaderGathersTheWindowsItsSamplesName) {
  data::Dataset d;
  const at::Tensor stream = at::arange(50, at::kLong);
  d.images = stream.as_strided({40, 10}, {1, 1});
  d.labels = stream.as_strided({40, 10}, {1, 1}, 1);
  d.target_kind = DatasetTargets::next_token;
  d.num_classes = 50;
  d.sample_shape = {10};
  data::BatchLoader loader(d, 16, /*shuffle=*/true, data::AugmentOptions{}, LoaderConfig{}, at::kCPU, /*seed=*/3);
  loader.limit_batches(2);
  EXPECT_EQ(loader.batches_per_epoch(), 2);
  EXPECT_EQ(loader.samples_per_epoch(), 32);
  loader.start_epoch(0);
  int batches = 0;
  while (auto b = loader.next()) {
    ++batches;
    ASSERT_EQ(b->inputs.sizes(), (std::vector<std::int64_t>{16, 10}));
    EXPECT_TRUE(b->inputs.is_contiguous());
    // Window i is i .. i + 9 and its targets i + 1 .. i + 10.
    const at::Tensor starts = b->inputs.select(1, 0);
    EXPECT_TRUE(at::equal(b->inputs, starts.unsqueeze(1) + at::arange(10, at::kLong)));
    EXPECT_TRUE(at::equal(b->targets, b->inputs + 1));
  }
  EXPECT_EQ(batches, 2) << "train.steps_per_epoch cuts the epoch";
}

}  // namespace
}  // namespace plugtrain
