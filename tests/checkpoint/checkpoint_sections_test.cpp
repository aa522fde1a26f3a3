// Checkpoint sections (checkpoint/state_section.h): each stateful part writes and reads its own
// section; a new one needs nothing but to derive from Stateful; format 1 checkpoints read into
// the sections today's parts expect.
// ctest-label: unit
#include <filesystem>

#include <gtest/gtest.h>

#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include "checkpoint/checkpoint.h"
#include "support/run_process.h"

namespace plugtrain {
namespace checkpoint_sections_test {

namespace fs = std::filesystem;

// What a user's new callback with state would be: it names a section and keeps its values there.
class CountingPart : public Stateful {
 public:
  std::int64_t count = 0;
  double mean = 0;
  bool warm = false;
  std::string last_label;
  const char* state_name() const override { return "counting_part"; }
  void save_state(StateSection& out) const override {
    out.put_int("count", count);
    out.put_real("mean", mean);
    out.put_flag("warm", warm);
    out.put_text("last_label", last_label);
  }
  void load_state(const StateSection& in) override {
    count = in.int_at("count");
    mean = in.real_at("mean");
    warm = in.flag_at("warm");
    last_label = in.text_at("last_label");
  }
};

class Linear : public TensorModel {
 public:
  Linear() : fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  torch::Tensor forward(torch::Tensor x) override { return fc(x); }
  torch::nn::Linear fc;
};

TEST(CheckpointSections, ANewStatefulPartRoundTripsThroughACheckpointFile) {
  const fs::path dir = testing::scratch_dir("sections");
  Linear model;
  torch::optim::SGD sgd(model.parameters(), torch::optim::SGDOptions(0.1));
  CountingPart before;
  before.count = 1234567890123;
  before.mean = 0.1 + 0.2;  // not a round number: stored bit for bit
  before.warm = true;
  before.last_label = "cat, \"dog\"";
  CheckpointContent content;
  save_parts(content.state, {&before});
  content.model_name = "linear";
  save_checkpoint(dir / "a.ckpt", model, sgd, content, c10::Device(c10::kCPU));

  const CheckpointContent read = read_checkpoint_info(dir / "a.ckpt");
  ASSERT_NE(read.state.find("counting_part"), nullptr);
  CountingPart after;
  load_parts(read.state, {&after});
  EXPECT_EQ(after.count, before.count);
  EXPECT_EQ(after.mean, before.mean);
  EXPECT_TRUE(after.warm);
  EXPECT_EQ(after.last_label, before.last_label);
  fs::remove_all(dir);
}

TEST(CheckpointSections, APartWithoutASectionKeepsItsFreshState) {
  CheckpointState empty;
  CountingPart part;
  part.count = 7;
  load_parts(empty, {&part});
  EXPECT_EQ(part.count, 7);
}

TEST(CheckpointSections, AMissingOrMistypedValueNamesItsSectionAndKey) {
  StateSection loop("loop");
  loop.put_real("step", 3.0);
  try {
    loop.int_at("epochs_done");
    FAIL() << "a missing key must throw";
  } catch (const CheckpointError& e) { EXPECT_STREQ(e.what(), "checkpoint section 'loop' has no 'epochs_done'"); }
  try {
    loop.int_at("step");
    FAIL() << "a real read as an integer must throw";
  } catch (const CheckpointError& e) { EXPECT_STREQ(e.what(), "checkpoint section 'loop': 'step' is not an integer"); }
}

TEST(CheckpointSections, TheStoredFormat1CheckpointReadsIntoTodaysSections) {
  const fs::path stored =
      fs::path(PLUGTRAIN_SOURCE_DIR) / "tests" / "fixtures" / "checkpoint_flat_progress" / "last.ckpt";
  const CheckpointState state = read_checkpoint_info(stored).state;
  ASSERT_NE(state.find("loop"), nullptr);
  EXPECT_EQ(state.find("loop")->int_at("epochs_done"), 1);
  EXPECT_EQ(state.find("loop")->int_at("step"), 706);
  EXPECT_EQ(state.find("loop")->int_at("planned_step"), 706);
  EXPECT_FALSE(state.find("loop")->flag_at("finished"));
  EXPECT_EQ(state.find("sampler")->int_at("batches_done"), 206);
  EXPECT_EQ(state.find("epoch_sums")->int_at("seen"), 206 * 8);
  EXPECT_TRUE(state.find("early_stopping")->flag_at("has_best"));
  EXPECT_EQ(state.find("checkpoint_saver")->int_at("best_epoch"), 1);
  EXPECT_EQ(state.find("precision"), nullptr) << "an fp32 run has no loss scale";
  EXPECT_NE(state.find("history")->text_at("epochs_json").find("\"epoch\""), std::string::npos);
}

}  // namespace checkpoint_sections_test
}  // namespace plugtrain
