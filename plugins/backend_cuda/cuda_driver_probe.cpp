#include "cuda_driver_probe.h"

#include <dlfcn.h>

#include <cstdlib>

namespace plugtrain::cuda {

namespace {

// The few driver-API entry points the probe needs, declared here so the probe does not
// depend on the driver's headers or library at build or link time.
using CUresult = int;
using CUdevice = int;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INSUFFICIENT_DRIVER = 35;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr int ATTR_MULTIPROCESSOR_COUNT = 16;
constexpr int ATTR_CC_MAJOR = 75;
constexpr int ATTR_CC_MINOR = 76;

struct Driver {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(std::size_t*, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
};

// NVML gives free memory without creating a CUDA context.
struct Nvml {
  struct Memory {
    unsigned long long total, free, used;
  };
  int (*init)() = nullptr;
  int (*by_pci_bus_id)(const char*, void**) = nullptr;
  int (*memory_info)(void*, Memory*) = nullptr;
  bool ready = false;
};

template <class Fn>
bool bind(void* lib, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, symbol));
  return fn != nullptr;
}

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string error_text(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.cuGetErrorString && d.cuGetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
  return "CUDA error " + std::to_string(r);
}

ProbeResult unusable(ProbeCode code, std::string message) { return ProbeResult{code, std::move(message), {}}; }

Nvml load_nvml() {
  Nvml n;
  // Handles from dlopen are kept: the driver libraries stay loaded like every plugin.
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return n;
  n.ready = bind(lib, "nvmlInit_v2", n.init) && bind(lib, "nvmlDeviceGetHandleByPciBusId_v2", n.by_pci_bus_id) &&
            bind(lib, "nvmlDeviceGetMemoryInfo", n.memory_info) && n.init() == 0;
  return n;
}

}  // namespace

ProbeResult probe_cuda_driver(int runtime_version) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");

  ::dlerror();
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) {
    const char* why = ::dlerror();
    return unusable(ProbeCode::no_driver, std::string("no NVIDIA driver: ") + (why ? why : "libcuda.so.1 not found"));
  }
  Driver d;
  if (!(bind(lib, "cuInit", d.cuInit) && bind(lib, "cuDriverGetVersion", d.cuDriverGetVersion) &&
        bind(lib, "cuDeviceGetCount", d.cuDeviceGetCount) && bind(lib, "cuDeviceGet", d.cuDeviceGet) &&
        bind(lib, "cuDeviceGetName", d.cuDeviceGetName) && bind(lib, "cuDeviceTotalMem_v2", d.cuDeviceTotalMem) &&
        bind(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute) &&
        bind(lib, "cuDeviceGetPCIBusId", d.cuDeviceGetPCIBusId)))
    return unusable(ProbeCode::driver_too_old, "libcuda.so.1 lacks driver API entry points (driver too old)");
  bind(lib, "cuGetErrorString", d.cuGetErrorString);

  int driver_version = 0;
  d.cuDriverGetVersion(&driver_version);
  // Within one CUDA major version a newer runtime runs on an older driver (minor version
  // compatibility); across majors it does not.
  if (driver_version > 0 && driver_version / 1000 < runtime_version / 1000)
    return unusable(ProbeCode::driver_too_old, "NVIDIA driver supports CUDA " + cuda_version_text(driver_version) +
                                                   ", the runtime needs CUDA " + cuda_version_text(runtime_version));

  const CUresult init = d.cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE) {
    if (visible) return unusable(ProbeCode::no_device, std::string("CUDA_VISIBLE_DEVICES='") + visible + "' hides every device");
    return unusable(ProbeCode::no_device, "the NVIDIA driver found no CUDA device");
  }
  if (init == CUDA_ERROR_INSUFFICIENT_DRIVER)
    return unusable(ProbeCode::driver_too_old, "NVIDIA driver (CUDA " + cuda_version_text(driver_version) +
                                                   ") is too old for runtime CUDA " + cuda_version_text(runtime_version));
  if (init != CUDA_SUCCESS) return unusable(ProbeCode::no_driver, "cuInit failed: " + error_text(d, init));

  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    return unusable(ProbeCode::error, "cuDeviceGetCount failed: " + error_text(d, r));
  if (count == 0) {
    if (visible) return unusable(ProbeCode::no_device, std::string("CUDA_VISIBLE_DEVICES='") + visible + "' hides every device");
    return unusable(ProbeCode::no_device, "the NVIDIA driver found no CUDA device");
  }

  Nvml nvml = load_nvml();
  ProbeResult result;
  result.code = ProbeCode::usable;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    if (d.cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    DeviceInfo info;
    info.index = i;
    char name[256] = {0};
    d.cuDeviceGetName(name, sizeof name, dev);
    info.name = name;
    std::size_t total = 0;
    if (d.cuDeviceTotalMem(&total, dev) == CUDA_SUCCESS) info.total_memory_bytes = total;
    int major = 0, minor = 0, sms = 0;
    d.cuDeviceGetAttribute(&major, ATTR_CC_MAJOR, dev);
    d.cuDeviceGetAttribute(&minor, ATTR_CC_MINOR, dev);
    d.cuDeviceGetAttribute(&sms, ATTR_MULTIPROCESSOR_COUNT, dev);
    info.capability = "sm_" + std::to_string(major) + std::to_string(minor);
    info.details["multiprocessors"] = std::to_string(sms);
    char bus[64] = {0};
    if (nvml.ready && d.cuDeviceGetPCIBusId(bus, sizeof bus, dev) == CUDA_SUCCESS) {
      void* handle = nullptr;
      Nvml::Memory mem{};
      if (nvml.by_pci_bus_id(bus, &handle) == 0 && nvml.memory_info(handle, &mem) == 0) info.free_memory_bytes = mem.free;
    }
    result.devices.push_back(std::move(info));
  }
  result.message = std::to_string(count) + " CUDA device(s), driver CUDA " + cuda_version_text(driver_version) +
                   ", runtime CUDA " + cuda_version_text(runtime_version);
  return result;
}

}  // namespace plugtrain::cuda
