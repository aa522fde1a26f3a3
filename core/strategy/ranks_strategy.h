// What ddp and fsdp share: one process per device, talking through Collectives. Every failure
// that involves the other processes leaves as a CollectiveError (collectively()), so the run
// recognises it by its type and asks the rendezvous store which rank is at fault.
#pragma once

#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <gloo/common/error.h>

#include "distributed/collectives.h"
#include "strategy/training_strategy.h"
#include "util/text.h"

namespace plugtrain {

// Runs a part of the step that waits on the other processes. A failure of the collective
// itself — c10d's distributed errors (store, network, NCCL), Gloo's own exceptions — becomes a
// CollectiveError, which the run answers by asking which rank is at fault. Anything else (this
// rank's own autograd, device or plugin error) passes unchanged: this rank then tells the
// others why it stops.
template <class Fn>
auto collectively(const std::string& what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const CollectiveError&) { throw; } catch (const c10::DistError& error) {
    throw CollectiveError(what + ": " + first_line(error.what()));
  } catch (const ::gloo::Exception& error) { throw CollectiveError(what + ": " + first_line(error.what())); }
}

class RanksStrategy : public TrainingStrategy {
 public:
  explicit RanksStrategy(Collectives& collectives) : collectives_(collectives) {}

  std::vector<double> sum(std::vector<double> values) override {
    // One round trip on the CPU, where Gloo is fastest for a few numbers.
    std::vector<at::Tensor> t{at::tensor(values, at::TensorOptions().dtype(at::kDouble))};
    collectives_.all_reduce_sum(t);
    const double* p = t[0].data_ptr<double>();
    return std::vector<double>(p, p + values.size());
  }
  // Asking is a round trip: every 8th step of the run (short epochs are covered too), and at
  // every epoch's end.
  bool stop_question_due(std::int64_t step) const override { return step % 8 == 0; }
  bool agree_to_stop(bool this_process_wants) override { return sum({this_process_wants ? 1.0 : 0.0})[0] > 0; }
  void note_step(std::int64_t step) override {
    collectively("reporting the step to the rendezvous store", [&] { collectives_.note_step(step); });
  }
  data::Shard shard(bool pad) const override { return {collectives_.rank(), collectives_.size(), pad}; }
  bool is_rank_zero() const override { return collectives_.rank() == 0; }
  int processes() const override { return collectives_.size(); }

 protected:
  Collectives& collectives_;
};

}  // namespace plugtrain
