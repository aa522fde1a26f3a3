// What the host of a real accelerator would wait for, counted on the emulated device (the SDK's
// "plugtrain.host_syncs" extension): a scalar read (item()), a copy to the host, a blocking copy
// to the device, an explicit synchronisation, and the operators whose result's size depends on
// the device's values (nonzero, boolean-mask indexing, unique, ...), which must read them.
//
// The emulation itself copies every operator's inputs to the CPU (the fallback and the host
// kernels): those copies are the emulator's, not the program's, and are not counted.
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "emulated_device.h"

namespace emulated {
namespace {

std::atomic<std::uint64_t> total_waits{0};
std::mutex causes_mutex;
std::map<std::string, std::uint64_t> causes;
thread_local int emulating = 0;  // > 0 inside the fallback or a host kernel

// Operators whose output size a GPU learns only by reading the data (CUDA synchronises for each).
const std::set<std::string>& size_from_values() {
  static const std::set<std::string> ops = {
      "aten::nonzero",        "aten::masked_select",    "aten::_unique",       "aten::_unique2",
      "aten::unique_dim",     "aten::unique_consecutive", "aten::unique_dim_consecutive",
      "aten::bincount",       "aten::equal",            "aten::is_nonzero",    "aten::histc"};
  return ops;
}

bool is_mask(const c10::IValue& v) {
  return v.isTensor() && (v.toTensor().scalar_type() == at::kBool || v.toTensor().scalar_type() == at::kByte);
}

// index/index_put_ with a boolean mask among the indices: the mask becomes positions (nonzero).
bool indexes_with_mask(const c10::IValue& indices) {
  if (!indices.isList()) return false;
  for (const c10::IValue& index : indices.toListRef())
    if (is_mask(index)) return true;
  return false;
}

}  // namespace

EmulationScope::EmulationScope() { ++emulating; }
EmulationScope::~EmulationScope() { --emulating; }

void count_host_wait(const std::string& cause) {
  if (emulating > 0) return;
  total_waits.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(causes_mutex);
  ++causes[cause];
}

void count_if_reads_values(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  if (emulating > 0) return;
  const c10::OperatorName& name = op.schema().operator_name();
  const std::size_t arguments = op.schema().arguments().size();
  const auto argument = [&](std::size_t i) -> const c10::IValue& { return stack[stack.size() - arguments + i]; };
  bool reads = size_from_values().count(name.name) > 0;
  if ((name.name == "aten::index" || name.name == "aten::index_put_" || name.name == "aten::index_put" ||
       name.name == "aten::_index_put_impl_") &&
      arguments >= 2)
    reads = indexes_with_mask(argument(1));
  if (name.name == "aten::repeat_interleave" && name.overload_name == "Tensor")
    reads = arguments < 3 || argument(arguments - 1).isNone();  // no output_size given
  if (reads) count_host_wait(name.overload_name.empty() ? name.name : name.name + "." + name.overload_name);
}

std::uint64_t host_waits() { return total_waits.load(std::memory_order_relaxed); }

std::map<std::string, std::uint64_t> host_waits_by_cause() {
  std::lock_guard<std::mutex> lock(causes_mutex);
  return causes;
}

}  // namespace emulated
