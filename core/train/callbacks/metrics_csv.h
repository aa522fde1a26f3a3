// metrics.csv: one row per logged step and one per epoch, appended, so a resumed run continues
// the file.
#pragma once

#include <filesystem>
#include <fstream>

#include "train/callback.h"

namespace plugtrain {

class MetricsCsv final : public Callback {
 public:
  explicit MetricsCsv(const std::filesystem::path& path);
  void on_log_step(const LoopState& state, const StepFigures& figures) override;
  void on_epoch_end(LoopState& state, const EpochMetrics& m) override;

 private:
  std::ofstream out_;
};

}  // namespace plugtrain
