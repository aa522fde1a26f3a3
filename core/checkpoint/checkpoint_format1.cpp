#include "checkpoint/checkpoint_format1.h"

#include <torch/serialize/input-archive.h>

#include "checkpoint/state_section.h"

namespace plugtrain {

namespace {

c10::IValue read_progress_value(torch::serialize::InputArchive& a, const std::string& key) {
  c10::IValue v;
  a.read("progress." + key, v);
  return v;
}

}  // namespace

CheckpointState format1_state(torch::serialize::InputArchive& a) {
  auto integer = [&](const char* key) { return read_progress_value(a, key).toInt(); };
  auto real = [&](const char* key) { return read_progress_value(a, key).toDouble(); };
  auto flag = [&](const char* key) { return read_progress_value(a, key).toBool(); };
  CheckpointState state;

  StateSection& loop = state.section("loop");
  loop.put_int("epochs_done", integer("epochs_done"));
  loop.put_int("step", integer("step"));
  loop.put_flag("finished", flag("finished"));
  // Added in 0.4: a checkpoint without them never halved its batch.
  c10::IValue v;
  loop.put_int("planned_step", a.try_read("progress.planned_step", v) ? v.toInt() : integer("step"));
  loop.put_int("step_batch", a.try_read("progress.step_batch", v) ? v.toInt() : 0);

  state.section("sampler").put_int("batches_done", integer("step_in_epoch"));
  StateSection& sums = state.section("epoch_sums");
  sums.put_real("loss_sum", real("partial_loss_sum"));
  sums.put_int("correct", integer("partial_correct"));
  sums.put_int("seen", integer("partial_seen"));

  StateSection& history = state.section("history");
  history.put_text("epochs_json", a.try_read("progress.history", v) && v.isString() ? v.toStringRef() : "");
  history.put_real("best_test_accuracy", real("best_test_accuracy"));
  history.put_int("best_test_epoch", integer("best_test_epoch"));

  // Format 1 wrote these whether or not the run had the part; a part only reads its own.
  StateSection& saver = state.section("checkpoint_saver");
  saver.put_flag("has_best", integer("best_epoch") > 0);
  saver.put_real("best", real("best_value"));
  saver.put_int("best_epoch", integer("best_epoch"));
  StateSection& stopping = state.section("early_stopping");
  stopping.put_flag("has_best", flag("stopping_has_best"));
  stopping.put_real("best", real("stopping_best"));
  stopping.put_int("best_epoch", 0);  // format 1 did not keep it; early stopping does not use it
  stopping.put_int("epochs_without_improvement", integer("epochs_without_improvement"));

  if (real("loss_scale") > 0) {  // fp16 (0: the run did not scale its loss)
    StateSection& precision = state.section("precision");
    precision.put_real("loss_scale", real("loss_scale"));
    precision.put_int("growth_tracker", integer("loss_scale_growth_tracker"));
    precision.put_int("skipped_steps", integer("skipped_steps"));
  }
  return state;
}

}  // namespace plugtrain
