// The device guard LibTorch asks which emulated device is current (per thread, like
// cudaSetDevice), and the PrivateUse1 hooks it asks whether the device exists. The emulated
// device computes synchronously on the host: one stream per device, and every event is done.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/CPUAllocator.h>

#include "emulated_device.h"

namespace emulated {
namespace {

constexpr c10::DeviceType kind = c10::DeviceType::PrivateUse1;

c10::Device device(int index) { return c10::Device(kind, static_cast<c10::DeviceIndex>(index)); }

class Guard final : public c10::impl::DeviceGuardImplInterface {
 public:
  c10::DeviceType type() const override { return kind; }
  c10::Device exchangeDevice(c10::Device d) const override {
    const c10::Device old = getDevice();
    if (d.index() != old.index()) setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return device(current_device()); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kind, "not an ", EMULATED_DEVICE_NAME, " device: ", d);
    TORCH_CHECK(d.index() < device_count(), EMULATED_DEVICE_NAME, ":", int(d.index()), " does not exist (",
                device_count(), " devices, PLUGTRAIN_EMU_DEVICES)");
    if (d.index() >= 0) set_current_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0) set_current_device(d.index());
  }
  c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getDefaultStream(c10::Device d) const override { return getStream(d); }
  c10::Stream exchangeStream(c10::Stream s) const override { return getStream(s.device()); }
  c10::DeviceIndex deviceCount() const noexcept override { return static_cast<c10::DeviceIndex>(device_count()); }
  // Work is done when its call returns: events need no state and are always complete.
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  bool queryStream(const c10::Stream&) const override { return true; }
  // Nothing to wait for here, but a real device's host would wait: counted (host_waits.cpp).
  void synchronizeStream(const c10::Stream&) const override { count_host_wait("device synchronisation"); }
  void synchronizeEvent(void*) const override { count_host_wait("device synchronisation"); }
  void synchronizeDevice(const c10::DeviceIndex) const override { count_host_wait("device synchronisation"); }
};

class Hooks final : public at::PrivateUse1HooksInterface {
 public:
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return static_cast<c10::DeviceIndex>(device_count()); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_current_device(d); }
  c10::DeviceIndex getCurrentDevice() const override { return static_cast<c10::DeviceIndex>(current_device()); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    const int old = current_device();
    set_current_device(d);
    return static_cast<c10::DeviceIndex>(old);
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  // Random numbers come from the CPU's generator: the fallback runs random operators there.
  const at::Generator& getDefaultGenerator(c10::DeviceIndex) const override {
    return at::detail::getDefaultCPUGenerator();
  }
  at::Device getDeviceFromPtr(void* data) const override {
    const int d = device_of_pointer(data);
    TORCH_CHECK(d >= 0, "pointer is not in any ", EMULATED_DEVICE_NAME, " device's memory");
    return device(d);
  }
  bool isPinnedPtr(const void*) const override { return false; }
  at::Allocator* getPinnedMemoryAllocator() const override { return c10::GetCPUAllocator(); }
};

}  // namespace

void register_guard_and_hooks() {
  static Guard guard;
  c10::impl::registerDeviceGuard(kind, &guard);
  static Hooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
}

}  // namespace emulated
