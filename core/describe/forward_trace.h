// One forward pass watched through ATen's RecordFunction callbacks, for the model summary
// (describe/model_summary.h says what is counted). Only observed: the numbers computed are
// untouched. An operator called with one of a module's own parameters or buffers as an input
// belongs to that module; the outermost such operator is the one seen (conv2d, not the
// convolution it calls). Its output gives the row's shape; consecutive operators of one module
// make one row.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>

#include "describe/model_summary.h"
#include "util/result.h"

namespace plugtrain {

struct ForwardTrace {
  // `tensor`, a parameter or buffer, belongs to the caller's module number `module`.
  void own(const at::Tensor& tensor, std::size_t module);

  std::map<const c10::TensorImpl*, std::size_t> by_impl;  // parameter or buffer -> module
  std::map<const void*, std::size_t> by_data;             // its storage, for a view of it
  int inside = 0;                                         // depth in an attributed operator
  // Module number and its row (output shape per sample, multiply-adds, repeated), in call order.
  std::vector<std::pair<std::size_t, LayerRow>> rows;
  std::set<std::size_t> seen;
  Status traced;  // an exception may not leave a callback: the first one is kept here
};

// Watches this thread's operators into `trace` for the life of the scope. Callbacks are plain
// function pointers, so the one trace of this thread is reached through a thread_local.
class TraceScope {
 public:
  explicit TraceScope(ForwardTrace& trace);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  at::CallbackHandle handle_;
  at::RecordFunctionGuard enabled_{true};
};

}  // namespace plugtrain
