// TensorBoard event files: the learning rate of every optimizer step; step loss and throughput
// every logged step; the epoch figures (and memory, where the backend knows it) every epoch.
#pragma once

#include <filesystem>

#include "logging/tensorboard_writer.h"
#include "train/callback.h"

namespace plugtrain {

class TensorBoardLogger final : public Callback {
 public:
  explicit TensorBoardLogger(const std::filesystem::path& folder) : writer_(folder) {}
  void on_step_end(const LoopState& state, const at::Tensor& loss) override;
  void on_log_step(const LoopState& state, const StepFigures& figures) override;
  void on_epoch_end(LoopState& state, const EpochMetrics& m) override;
  void on_late_test(LoopState& state, const EpochMetrics& m) override;

 private:
  TensorBoardWriter writer_;
};

}  // namespace plugtrain
