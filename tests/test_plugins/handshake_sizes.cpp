// Handshakes of other lengths than today's (abi.h, the growth rule): one that ends at `name`, the
// last field the host needs, as a plugin built before `version` and `description` were appended
// would have it; one with fields appended after today's, as a later SDK's plugin; and one that
// ends before `name`, which the host must refuse. TEST_HANDSHAKE picks: shorter, longer, too_short.
//
// The shorter ones sit at the very end of a readable page, before a page that cannot be read, so
// a host that reads a field past struct_size crashes the test instead of reading garbage. The
// registration, where the host gets that far, is good_backend.cpp's (built with TEST_HANDSHAKE).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string_view>

#include <torch/version.h>

#include "plugtrain/abi.h"

namespace {

struct ThroughName {  // today's fields up to and including `name`
  uint32_t struct_size, sdk_abi_major, sdk_abi_minor, kinds;
  const char *torch_version, *cxx_abi, *compiler, *name;
};
static_assert(sizeof(ThroughName) == PLUGTRAIN_INFO_FIELD_END(name), "ends where the host's needs end");

struct ThroughCxxAbi {  // ends before `compiler` and `name`
  uint32_t struct_size, sdk_abi_major, sdk_abi_minor, kinds;
  const char *torch_version, *cxx_abi;
};

struct Longer {  // today's fields, then two a later SDK appended
  plugtrain_plugin_info today;
  const char* homepage;
  uint64_t later_flags;
};

// A copy of `value` ending exactly where a page that cannot be read begins.
template <typename T>
const plugtrain_plugin_info* before_a_guard_page(const T& value) {
  const long page = ::sysconf(_SC_PAGESIZE);
  void* pages = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) return nullptr;
  char* end = static_cast<char*>(pages) + page;
  ::mprotect(end, page, PROT_NONE);
  std::memcpy(end - sizeof(T), &value, sizeof(T));
  return reinterpret_cast<const plugtrain_plugin_info*>(end - sizeof(T));
}

const plugtrain_plugin_info* make_handshake() {
  const std::string_view which = TEST_HANDSHAKE;
  if (which == "shorter")
    return before_a_guard_page(ThroughName{sizeof(ThroughName), PLUGTRAIN_SDK_ABI_MAJOR, PLUGTRAIN_SDK_ABI_MINOR,
                                           PLUGTRAIN_KIND_BACKEND, TORCH_VERSION, PLUGTRAIN_CXX_ABI_TAG,
                                           PLUGTRAIN_COMPILER, TEST_PLUGIN_NAME});
  if (which == "too_short")
    return before_a_guard_page(ThroughCxxAbi{sizeof(ThroughCxxAbi), PLUGTRAIN_SDK_ABI_MAJOR, PLUGTRAIN_SDK_ABI_MINOR,
                                             PLUGTRAIN_KIND_BACKEND, TORCH_VERSION, PLUGTRAIN_CXX_ABI_TAG});
  static const Longer longer = {{sizeof(Longer), PLUGTRAIN_SDK_ABI_MAJOR, PLUGTRAIN_SDK_ABI_MINOR,
                                 PLUGTRAIN_KIND_BACKEND, TORCH_VERSION, PLUGTRAIN_CXX_ABI_TAG, PLUGTRAIN_COMPILER,
                                 TEST_PLUGIN_NAME, "0.0.1", "a handshake with two fields after today's"},
                                "https://example.org/later",
                                0xffffffffffffffffull};
  return &longer.today;
}

}  // namespace

extern "C" PLUGTRAIN_EXPORT const plugtrain_plugin_info* plugtrain_plugin_info_v1(void) {
  static const plugtrain_plugin_info* const info = make_handshake();
  return info;
}
