// A plugin that writes its handshake by hand so tests can lie about the ABI or LibTorch
// version: the host must refuse it before touching any C++ symbol (it has none).
#include <torch/version.h>

#include "plugtrain/abi.h"

#ifndef TEST_ABI_MAJOR
#define TEST_ABI_MAJOR PLUGTRAIN_SDK_ABI_MAJOR
#endif
#ifndef TEST_ABI_MINOR
#define TEST_ABI_MINOR PLUGTRAIN_SDK_ABI_MINOR
#endif
#ifndef TEST_TORCH_VERSION
#define TEST_TORCH_VERSION TORCH_VERSION
#endif

extern "C" PLUGTRAIN_EXPORT const plugtrain_plugin_info* plugtrain_plugin_info_v1(void) {
  static const plugtrain_plugin_info info = {sizeof(plugtrain_plugin_info),
                                             TEST_ABI_MAJOR,
                                             TEST_ABI_MINOR,
                                             PLUGTRAIN_KIND_BACKEND,
                                             TEST_TORCH_VERSION,
                                             PLUGTRAIN_CXX_ABI_TAG,
                                             PLUGTRAIN_COMPILER,
                                             TEST_PLUGIN_NAME,
                                             "0.0.1",
                                             "handshake-only test plugin"};
  return &info;
}
