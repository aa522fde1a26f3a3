// LibTorch's process-wide settings that building a run changes: the intra-op threads
// (train.threads), TF32 for float32 matrix products and convolutions (train.tf32), cuDNN's
// autotuner (train.cudnn_benchmark), deterministic algorithms (train.deterministic), the CPU
// generator (experiment.seed) and, for a run on the host CPU, the host heap's handling of freed
// memory (process/host_heap.h). A scope records them when it begins and puts them back when it
// ends; the heap's thresholds are the exception: glibc cannot switch its dynamic adjustment back
// on, so they go to where that adjustment ends up.
//
// Every BuiltRun holds one, so commands that build several runs in one process (doctor, bench,
// the automatic batch size, select = "fastest") give each run exactly what it would get alone:
// one backend's settings never leak into the next one's plan or steps.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

namespace plugtrain {

class ProcessSettingsScope {
 public:
  ProcessSettingsScope();
  ~ProcessSettingsScope();
  ProcessSettingsScope(const ProcessSettingsScope&) = delete;
  ProcessSettingsScope& operator=(const ProcessSettingsScope&) = delete;

  // A run on the host CPU: freed memory stays in the heap for the next step until the scope
  // ends. The line for the run's log.
  std::string keep_freed_host_memory();

 private:
  bool host_heap_changed_ = false;
  int threads_;
  bool tf32_matmul_, tf32_convolutions_, cudnn_benchmark_, cudnn_deterministic_;
  bool deterministic_algorithms_, deterministic_warn_only_;
  at::Tensor cpu_generator_state_;
};

}  // namespace plugtrain
