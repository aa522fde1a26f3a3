// The loop's extension point (Lightning's Callback): everything that watches or records a fit —
// console lines, the progress bar, metrics.csv, the loggers (TensorBoard, MLflow), early stopping, checkpoints — is
// one Callback in core/train/callbacks/. Callbacks run in the order they were given.
//
// A callback with state a resumed run needs (early stopping's best, the checkpoint monitor's
// best) also derives from Stateful (checkpoint/state_section.h): it names its section of the
// checkpoint and writes and reads only that. Nothing else changes for a new one.
#pragma once

#include <ATen/core/Tensor.h>

#include "train/loop_state.h"

namespace plugtrain {

class Callback {
 public:
  virtual ~Callback() = default;

  // After a resume restored the state, before the first step.
  virtual void on_train_start(LoopState&) {}
  virtual void on_epoch_start(const LoopState&) {}
  // After every optimizer step. `loss` is still on the device: reading it synchronises, so
  // only do it now and then.
  virtual void on_step_end(const LoopState&, const at::Tensor& /*loss*/) {}
  // Every train.log_interval steps.
  virtual void on_log_step(const LoopState&, const StepFigures&) {}
  // A step ran out of device memory and the run continues with a smaller batch.
  virtual void on_batch_halved(const LoopState&, const BatchHalving&) {}
  // After the epoch's training and evaluation. May stop the fit (state.request_stop).
  virtual void on_epoch_end(LoopState&, const EpochMetrics&) {}
  // With a validation split, the test set evaluated after the epoch callbacks had that epoch
  // (early stopping ended the run): `m` is the epoch's record, its test figures now filled.
  virtual void on_late_test(LoopState&, const EpochMetrics& /*m*/) {}
  // Once, whatever the reason the fit ended (state.stop says which).
  virtual void on_train_end(LoopState&) {}
};

}  // namespace plugtrain
