#include "train/callbacks/metrics_csv.h"

namespace plugtrain {

MetricsCsv::MetricsCsv(const std::filesystem::path& path) {
  const bool fresh = !std::filesystem::exists(path);
  out_.open(path, std::ios::app);
  if (fresh) out_ << "kind,epoch,step,loss,accuracy,test_loss,test_accuracy,lr,samples_per_second,seconds\n";
}

void MetricsCsv::on_log_step(const LoopState& state, const StepFigures& f) {
  out_ << "step," << state.epoch << "," << state.step << "," << f.loss << ",,,," << f.lr << "," << f.samples_per_second
       << ",\n"
       << std::flush;
}

void MetricsCsv::on_epoch_end(LoopState& state, const EpochMetrics& m) {
  out_ << "epoch," << m.epoch << "," << state.step << "," << m.train_loss << "," << m.train_accuracy << ",";
  if (m.test_loss) out_ << *m.test_loss;
  out_ << ",";
  if (m.test_accuracy) out_ << *m.test_accuracy;
  out_ << "," << m.lr << "," << m.samples_per_second << "," << m.seconds << "\n" << std::flush;
}

}  // namespace plugtrain
