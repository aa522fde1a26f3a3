// The operators the emulated device implements itself (what PyTorch's torch_openreg shows is the
// minimum: allocation, copies, views, storage), and the boxed fallback that runs every other
// operator on the CPU: the inputs are copied to the CPU, the CPU kernel runs, the results are
// copied back. Each fallback is counted per operator, so the host can show what fell back.
#include <map>
#include <mutex>

#include <ATen/EmptyTensor.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_cpu_dispatch.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/set_cpu_dispatch.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "emulated_device.h"

namespace emulated {
namespace {

constexpr c10::DispatchKeySet device_keys(c10::DispatchKey::PrivateUse1);

c10::Device checked_device(std::optional<c10::Device> device_opt, std::optional<c10::Layout> layout,
                           std::optional<bool> pin_memory) {
  const c10::Device device = c10::device_or_default(device_opt);
  TORCH_CHECK(device.is_privateuseone(), "expected an ", EMULATED_DEVICE_NAME, " device, got ", device);
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided, EMULATED_DEVICE_NAME,
              " tensors are strided (no sparse layouts)");
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory), "only CPU memory can be pinned");
  return device;
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(checked_device(device, layout, pin_memory));
  return at::detail::empty_generic(size, c10::GetAllocator(c10::DeviceType::PrivateUse1), device_keys,
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  const c10::DeviceGuard guard(checked_device(device, layout, pin_memory));
  return at::detail::empty_strided_generic(size, stride, c10::GetAllocator(c10::DeviceType::PrivateUse1), device_keys,
                                           c10::dtype_or_default(dtype));
}

// The device's memory is host memory, so a CPU tensor can stand for a device tensor in a copy.
at::Tensor host_view(const at::Tensor& t) {
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(c10::kCPU));
}

// Copies between this device and the CPU, and between two of its devices: native, no fallback.
// A device that computes asynchronously makes its host wait for a copy to the host, and for a
// blocking one to the device (CUDA synchronises the stream unless it is non_blocking).
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  if (dst.is_cpu() && !self.is_cpu()) count_host_wait("copy to the host");
  if (self.is_cpu() && !dst.is_cpu() && !non_blocking) count_host_wait("blocking copy to the device");
  at::Tensor to = dst.is_cpu() ? dst : host_view(dst);
  at::native::copy_(to, self.is_cpu() ? self : host_view(self), non_blocking);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  const c10::OptionalDeviceGuard guard(dst.is_cpu() ? std::nullopt : std::optional<c10::Device>(dst.device()));
  at::native::resize_(dst, self.sizes(), std::nullopt);
  return copy_from(self, dst, false);
}

at::Tensor as_strided(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                      std::optional<c10::SymInt> storage_offset) {
  return at::cpu::as_strided_symint(self, size, stride, std::move(storage_offset));
}

// A larger storage comes from the allocator of the thread's current device: make it the tensor's.
const at::Tensor& resize(const at::Tensor& self, c10::SymIntArrayRef size, std::optional<c10::MemoryFormat> format) {
  const c10::DeviceGuard guard(self.device());
  return at::native::resize_(self, C10_AS_INTARRAYREF_SLOW(size), format);
}

at::Tensor reshape_alias(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  return at::native::_reshape_alias(self, C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride));
}

at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size) {
  return at::native::view(self, C10_AS_INTARRAYREF_SLOW(size));
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  count_host_wait("aten::_local_scalar_dense");
  return at::native::_local_scalar_dense_cpu(self);
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) { return at::native::set_tensor_(self, source); }
at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) { return at::native::set_(self, source); }
at::Tensor& set_source_storage_offset(at::Tensor& self, at::Storage storage, int64_t offset, c10::IntArrayRef size,
                                      c10::IntArrayRef stride) {
  return at::cpu::set_(self, storage, offset, size, stride);
}

// torch::nn::Module::to() moves parameters with set_data, which keeps each parameter's identity
// (modules hold them as members) but asks whether the two tensors may share a TensorImpl kind.
// LibTorch answers yes only for the backends it knows; a PrivateUse1 device says it itself.
bool compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  auto dense = [](const at::Tensor& t) {
    return t.layout() == c10::kStrided && (t.is_cpu() || t.is_privateuseone());
  };
  return self.key_set() == from.key_set() || (dense(self) && dense(from));
}

std::mutex counts_mutex;
std::map<std::string, std::uint64_t> counts;

void counted_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::OperatorName& name = op.schema().operator_name();
  count_fallback(name.overload_name.empty() ? name.name : name.name + "." + name.overload_name);
  count_if_reads_values(op, *stack);
  const EmulationScope emulating;  // its copies to and from the CPU are the emulator's
  at::native::cpu_fallback(op, stack);
}

}  // namespace

void count_fallback(const std::string& op) {
  std::lock_guard<std::mutex> lock(counts_mutex);
  ++counts[op];
}

std::map<std::string, std::uint64_t> fallback_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex);
  return counts;
}

void register_kernels() {
  // Registered at run time, when the host initialises the plugin: a library that lives as long
  // as the process (the plugin is never unloaded).
  static torch::Library native(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  native.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  native.impl("empty_strided", TORCH_FN(empty_strided));
  native.impl("_copy_from", TORCH_FN(copy_from));
  native.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  native.impl("as_strided", TORCH_FN(as_strided));
  native.impl("resize_", TORCH_FN(resize));
  native.impl("_reshape_alias", TORCH_FN(reshape_alias));
  native.impl("view", TORCH_FN(view));
  native.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  native.impl("_has_compatible_shallow_copy_type", TORCH_FN(compatible_shallow_copy_type));
  native.impl("set_.source_Tensor", TORCH_FN(set_source_tensor));
  native.impl("set_.source_Storage", TORCH_FN(set_source_storage));
  native.impl("set_.source_Storage_storage_offset", TORCH_FN(set_source_storage_offset));
  static torch::Library fallback(torch::Library::IMPL, "_", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  fallback.fallback(torch::CppFunction::makeFromBoxedFunction<&counted_cpu_fallback>());
}

}  // namespace emulated
