// metrics.csv: one row per logged step and one per epoch, appended, so a resumed run continues
// the file. A resumed run first drops the rows written after its checkpoint (by a run killed
// later), so no row is there twice. A row that cannot be written stops the run.
#pragma once

#include <filesystem>
#include <fstream>

#include "train/callback.h"

namespace plugtrain {

class MetricsCsv final : public Callback {
 public:
  explicit MetricsCsv(const std::filesystem::path& path);
  void on_train_start(LoopState& state) override;
  void on_log_step(const LoopState& state, const StepFigures& figures) override;
  void on_epoch_end(LoopState& state, const EpochMetrics& m) override;

 private:
  void check_written();
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace plugtrain
