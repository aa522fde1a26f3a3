#include "train/loop_state.h"

namespace plugtrain {

std::optional<double> EpochMetrics::metric(Metric name) const {
  switch (name) {
    case Metric::train_loss: return train_loss;
    case Metric::train_accuracy: return train_accuracy;
    case Metric::test_loss: return test_loss;
    case Metric::test_accuracy: return test_accuracy;
  }
  return test_accuracy;
}

void EpochSums::save_state(StateSection& out) const {
  out.put_real("loss_sum", loss_sum);
  out.put_int("correct", correct);
  out.put_int("seen", seen);
}

void EpochSums::load_state(const StateSection& in) {
  loss_sum = in.real_at("loss_sum");
  correct = in.int_at("correct");
  seen = in.int_at("seen");
}

void LoopState::save_state(StateSection& out) const {
  out.put_int("epochs_done", epochs_done);
  out.put_int("step", step);
  out.put_int("planned_step", planned_step);
  out.put_int("step_batch", step_batch);  // a resume keeps the batch an out-of-memory error forced
  out.put_flag("finished", finished);
}

void LoopState::load_state(const StateSection& in) {
  epochs_done = in.int_at("epochs_done");
  epoch = epochs_done;
  step = in.int_at("step");
  planned_step = in.int_at("planned_step");
  step_batch = in.int_at("step_batch");
  finished = in.flag_at("finished");
}

}  // namespace plugtrain
