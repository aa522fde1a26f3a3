// What a replayed step does outside its recording, on any machine (graph_fit_fixture.h): on a
// GPU, each operator that runs there is a launch of its own beside the graph's. The running sums
// and the batch's gather run inside the recording; what is left is measured here.
// ctest-label: unit
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph_fit_fixture.h"

namespace plugtrain {
namespace graph_step_test {

// A replayed step adds its loss and accuracy to the epoch's running sums inside its recording:
// on a GPU those adds and the task's statistics are no launches of their own beside the graph's.
// Outside the recorded work only the eager steps (the 3 partial batches) and the evaluations
// compute the training accuracy's argmax, and the epoch figures stay the eager run's.
TEST_F(GraphFitTest, ReplayedStepsCountTheirFiguresInsideTheRecording) {
  int eager_outside = 0, replayed_outside = 0;
  TrainSummary eager, replayed;
  {
    OpsOutsideTheRecording ops;
    eager = fit(false);
    eager_outside = ops.calls("aten::argmax");
  }
  {
    OpsOutsideTheRecording ops;
    replayed = fit(true);
    replayed_outside = ops.calls("aten::argmax");
  }
  ASSERT_EQ(counts_.warm_ups + counts_.replays, 18) << "every full batch ran as recorded work";
  EXPECT_GT(eager_outside, 21) << "21 training steps and the evaluations";
  EXPECT_EQ(replayed_outside, eager_outside - 18) << "the 18 full steps counted inside the recorded work";
  expect_same_curves(eager, replayed);
  for (std::size_t i = 0; i < eager.epochs.size(); ++i)
    EXPECT_NEAR(*eager.epochs[i].metric("train_accuracy"), *replayed.epochs[i].metric("train_accuracy"), 1e-9) << i;
}

// data.on_device: a replayed step gathers its batch inside the recording (only the samples'
// places, and with crops or flips their row and column maps, are copied in before it), so on a
// GPU the gather, the byte-to-float conversion and the normalisation are no launches of their
// own. Outside the recorded work only the eager steps (the 3 partial batches) gather, and the
// curves and accuracies are eager's, with the same byte images, crops and flips.
TEST_F(GraphFitTest, ReplayedStepsGatherTheirBatchesInsideTheRecording) {
  on_device_ = true;
  alter_data_ = [](data::Dataset& d) {  // byte images, normalised by the loader as real ones are
    d.images = d.images.mul(40).add(128).clamp(0, 255).to(at::kByte);
    d.normalization = {{0.5}, {0.25}};
  };
  for (const bool moves : {false, true}) {
    SCOPED_TRACE(moves ? "random_crop and horizontal_flip" : "no augmentation");
    auto augment = [&](Experiment& e) {
      if (moves) e.data.augment.order = {Augmentation::random_crop, Augmentation::horizontal_flip};
      e.data.augment.crop_padding = 1;
    };
    // The images' gather: index_select without crops or flips, one advanced index with them.
    const char* gather = moves ? "aten::index" : "aten::index_select";
    int eager_outside = 0, replayed_outside = 0;
    TrainSummary eager, replayed;
    {
      OpsOutsideTheRecording ops;
      eager = fit(false, augment);
      eager_outside = ops.calls(gather);
    }
    {
      OpsOutsideTheRecording ops;
      replayed = fit(true, augment);
      replayed_outside = ops.calls(gather);
    }
    ASSERT_EQ(counts_.warm_ups + counts_.replays, 18) << "every full batch ran as recorded work";
    EXPECT_GE(eager_outside, 21) << "21 training batches gathered";
    EXPECT_EQ(replayed_outside, eager_outside - 18 * (moves ? 1 : 2))
        << "the 18 full batches gathered inside the recorded work (without crops: images and labels)";
    expect_same_curves(eager, replayed);
    for (std::size_t i = 0; i < eager.epochs.size(); ++i)
      EXPECT_NEAR(*eager.epochs[i].metric("train_accuracy"), *replayed.epochs[i].metric("train_accuracy"), 1e-9) << i;
  }
}

// What a steady replayed step still does outside its recording, which on a GPU is what launches
// beside the graph: with the data on the device and a cosine schedule (the learning rate moves
// every step), one copy (the samples' places into the recording's input) and one fill (the
// learning rate); views and allocations launch nothing. On the CPU the epoch loop also reads
// each step's loss to check that it is finite (EpochLoop::count: there a read, not a wait; a GPU
// run checks it when it reads the loss anyway). CUDA adds two fills of its own per replay for a
// model with dropout: the RNG's seed and offset, in CUDAGraph::replay.
TEST_F(GraphFitTest, ASteadyReplayedStepOnlyCopiesItsPlacesInAndWritesTheLearningRate) {
  on_device_ = true;
  alter_data_ = [](data::Dataset& d) { d.images = d.images.mul(40).add(128).clamp(0, 255).to(at::kByte); };
  OpsOutsideTheRecording ops;
  fit(true);
  const std::set<std::string> no_launch{"aten::narrow", "aten::slice", "aten::as_strided", "aten::view",
                                        "aten::detach", "aten::alias", "aten::empty",      "aten::empty_strided"};
  int steady = 0;
  for (const std::vector<std::string>& segment : ops.between_replays()) {
    // Between the last replay of an epoch and the first of the next: the epoch's partial batch,
    // trained eagerly (its loss computed outside), and the evaluation.
    if (std::find(segment.begin(), segment.end(), "aten::cross_entropy_loss") != segment.end()) continue;
    ++steady;
    std::map<std::string, int> launching;
    for (const std::string& op : segment)
      if (!no_launch.count(op)) ++launching[op];
    EXPECT_EQ(launching, (std::map<std::string, int>{{"aten::copy_", 1}, {"aten::fill_", 1}, {"aten::item", 1}}))
        << ::testing::PrintToString(segment);
  }
  // 15 replays (3 in the first epoch, 6 in each other), 14 gaps between them, 2 of them across an
  // epoch's end.
  EXPECT_EQ(steady, 12);
}

}  // namespace graph_step_test
}  // namespace plugtrain
