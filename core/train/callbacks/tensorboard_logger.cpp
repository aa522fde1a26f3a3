#include "train/callbacks/tensorboard_logger.h"

namespace plugtrain {

void TensorBoardLogger::on_log_step(const LoopState& state, const StepFigures& f) {
  writer_.add_scalar("train/loss_step", f.loss, state.step);
  writer_.add_scalar("train/samples_per_second", f.samples_per_second, state.step);
  writer_.flush();
}

// The learning rate of every optimizer step (the schedule as it ran); written with the next flush.
void TensorBoardLogger::on_step_end(const LoopState& state, const at::Tensor&) {
  writer_.add_scalar("train/lr", state.lr, state.step);
}

void TensorBoardLogger::on_late_test(LoopState&, const EpochMetrics& m) {
  if (m.test_loss) writer_.add_scalar("epoch/test_loss", *m.test_loss, m.epoch);
  for (const MetricValue& v : m.test) writer_.add_scalar("epoch/test_" + v.name, v.value, m.epoch);
  writer_.flush();
}

void TensorBoardLogger::on_epoch_end(LoopState&, const EpochMetrics& m) {
  writer_.add_scalar("epoch/train_loss", m.train_loss, m.epoch);
  for (const MetricValue& v : m.train) writer_.add_scalar("epoch/train_" + v.name, v.value, m.epoch);
  if (m.test_loss) writer_.add_scalar("epoch/test_loss", *m.test_loss, m.epoch);
  for (const MetricValue& v : m.test) writer_.add_scalar("epoch/test_" + v.name, v.value, m.epoch);
  if (m.val_loss) writer_.add_scalar("epoch/val_loss", *m.val_loss, m.epoch);
  for (const MetricValue& v : m.val) writer_.add_scalar("epoch/val_" + v.name, v.value, m.epoch);
  writer_.add_scalar("epoch/lr", m.lr, m.epoch);
  writer_.add_scalar("epoch/samples_per_second", m.samples_per_second, m.epoch);
  if (m.memory.process_used_bytes)
    writer_.add_scalar("epoch/memory_used_bytes", double(*m.memory.process_used_bytes), m.epoch);
  if (m.memory.process_peak_bytes)
    writer_.add_scalar("epoch/memory_peak_bytes", double(*m.memory.process_peak_bytes), m.epoch);
  if (m.phases.timed_steps > 0)
    for (int p = 0; p < kPhases; ++p)
      writer_.add_scalar(std::string("phase/") + to_string(Phase(p)) + "_share", m.phases.share(Phase(p)), m.epoch);
  writer_.flush();
}

}  // namespace plugtrain
