#include "process/process_settings.h"

#include "process/host_heap.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/Generator.h>

namespace plugtrain {

namespace {

at::Generator cpu_generator() { return at::globalContext().defaultGenerator(c10::Device(c10::kCPU)); }

}  // namespace

ProcessSettingsScope::ProcessSettingsScope()
    : threads_(at::get_num_threads()),
      tf32_matmul_(at::globalContext().allowTF32CuBLAS()),
      tf32_convolutions_(at::globalContext().allowTF32CuDNN()),
      cudnn_benchmark_(at::globalContext().benchmarkCuDNN()),
      cudnn_deterministic_(at::globalContext().deterministicCuDNN()),
      deterministic_algorithms_(at::globalContext().deterministicAlgorithms()),
      deterministic_warn_only_(at::globalContext().deterministicAlgorithmsWarnOnly()),
      cpu_generator_state_(cpu_generator().get_state()) {}

ProcessSettingsScope::~ProcessSettingsScope() {
  auto& context = at::globalContext();
  if (at::get_num_threads() != threads_) at::set_num_threads(threads_);
  context.setAllowTF32CuBLAS(tf32_matmul_);
  context.setAllowTF32CuDNN(tf32_convolutions_);
  context.setBenchmarkCuDNN(cudnn_benchmark_);
  context.setDeterministicCuDNN(cudnn_deterministic_);
  context.setDeterministicAlgorithms(deterministic_algorithms_, deterministic_warn_only_);
  cpu_generator().set_state(cpu_generator_state_);
  if (host_heap_changed_) restore_host_heap();
}

std::string ProcessSettingsScope::keep_freed_host_memory() {
  if (host_heap_changed_) return "";
  const HostHeapChange change = plugtrain::keep_freed_host_memory();
  host_heap_changed_ = change.changed;
  return change.line;
}

}  // namespace plugtrain
