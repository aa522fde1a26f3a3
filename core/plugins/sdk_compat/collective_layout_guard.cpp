// Compile-time guard for collective.h's CollectiveSetup, which the host passes to a backend's
// collective factory (SDK 2.1, unchanged through 3.4): frozen like the types of frozen_v3.h,
// kept apart because its header pulls in c10d.
#include <chrono>
#include <string>

#include "plugtrain/collective.h"

namespace plugtrain::sdk_compat::v3 {
namespace {

struct CollectiveSetup {
  std::string collective;
  c10::intrusive_ptr<c10d::Store> store;
  int rank = 0, world_size = 1;
  int device = 0;
  std::chrono::milliseconds timeout{0};
};

static_assert(sizeof(::plugtrain::CollectiveSetup) == sizeof(CollectiveSetup) &&
                  alignof(::plugtrain::CollectiveSetup) == alignof(CollectiveSetup),
              "CollectiveSetup crosses the plugin boundary, so its layout is frozen: docs/plugins.md, Versioning rules");

}  // namespace
}  // namespace plugtrain::sdk_compat::v3
