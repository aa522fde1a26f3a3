// metrics.csv: one row per logged step and one per epoch, appended, so a resumed run continues
// the file. A resumed run first drops the rows written after its checkpoint (by a run killed
// later), so no row is there twice. A row that cannot be written stops the run.
//
// Columns: kind,epoch,step,loss,<train headline>,test_loss,test_<headline>,lr,samples_per_second,
// seconds, then train_<m> and test_<m> for the task's other metrics, then (with a validation
// split) val_loss and val_<m> for every evaluation metric. Classification's are
// kind,epoch,step,loss,accuracy,test_loss,test_accuracy,...,seconds,test_top5_accuracy.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "train/callback.h"

namespace plugtrain {

class MetricsCsv final : public Callback {
 public:
  // `training`, `evaluation`: the task's metrics of each pass, headline first.
  // `with_val`: the run has a validation split; its columns follow the others.
  MetricsCsv(const std::filesystem::path& path, std::vector<TaskMetric> training, std::vector<TaskMetric> evaluation,
             bool with_val = false);
  void on_train_start(LoopState& state) override;
  void on_log_step(const LoopState& state, const StepFigures& figures) override;
  void on_epoch_end(LoopState& state, const EpochMetrics& m) override;
  // The epoch's row again, with its test figures (the later row of an epoch stands).
  void on_late_test(LoopState& state, const EpochMetrics& m) override { on_epoch_end(state, m); }

 private:
  void check_written();
  std::string header() const;
  std::filesystem::path path_;
  std::vector<TaskMetric> training_, evaluation_;
  bool with_val_;
  std::ofstream out_;
};

}  // namespace plugtrain
