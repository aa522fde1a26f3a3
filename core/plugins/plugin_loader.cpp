#include "plugins/plugin_loader.h"

#include <dlfcn.h>

#include <torch/version.h>

#include "plugins/plugin_kinds.h"
#include "plugins/plugin_permissions.h"
#include "plugtrain/abi.h"
#include "util/result.h"

namespace plugtrain {
namespace fs = std::filesystem;

namespace {

std::string safe(const char* s) { return s ? std::string(s) : std::string(); }

// One line for a plugin of another SDK: what it was built against, what this host takes, what
// to do. The host takes exactly its own SDK version (abi.h): the SDK's values cross the boundary
// as they are, so any other version is refused before any of the plugin's C++ is touched.
Status sdk_fits(std::uint32_t major, std::uint32_t minor) {
  if (major == PLUGTRAIN_SDK_ABI_MAJOR && minor == PLUGTRAIN_SDK_ABI_MINOR) return Status::fine();
  const std::string plugin = "built against SDK " + std::to_string(major) + "." + std::to_string(minor);
  const std::string host = "this host takes SDK " + std::to_string(PLUGTRAIN_SDK_ABI_MAJOR) + "." +
                           std::to_string(PLUGTRAIN_SDK_ABI_MINOR) + " plugins only";
  if (major < PLUGTRAIN_SDK_ABI_MAJOR)
    return WhyNot{plugin + "; " + host + ": move it to SDK " + std::to_string(PLUGTRAIN_SDK_ABI_MAJOR) +
                  " and rebuild it (docs/migrating-to-sdk5.md)"};
  if (major > PLUGTRAIN_SDK_ABI_MAJOR) return WhyNot{plugin + "; " + host + ": update plugtrain"};
  return WhyNot{plugin + "; " + host + ": rebuild it against this host's SDK (the same source builds)"};
}

OpenedPlugin refused(OpenedPlugin opened, std::string reason) {
  opened.record.status = PluginStatus::refused;
  opened.record.reason = std::move(reason);
  return opened;
}

}  // namespace

std::string kind_names(std::uint32_t kinds, const char* separator) {
  std::string names;
  for (const PluginKind& k : kPluginKinds)
    if (kinds & k.bit) names += (names.empty() ? "" : separator) + std::string(k.name);
  return names;
}

std::uint32_t unknown_kinds(std::uint32_t kinds) {
  for (const PluginKind& k : kPluginKinds) kinds &= ~k.bit;
  return kinds;
}

std::string host_torch_version() { return TORCH_VERSION; }
std::string host_cxx_abi() { return PLUGTRAIN_CXX_ABI_TAG; }

void retain_until_exit(boost::dll::shared_library library) {
  // Deliberately leaked: a static vector's destructor would dlclose at exit.
  static auto* retained = new std::vector<boost::dll::shared_library>();
  retained->push_back(std::move(library));
}

OpenedPlugin open_plugin(const PluginCandidate& candidate, bool allow_insecure) {
  OpenedPlugin opened;
  opened.record.path = candidate.path;
  opened.record.origin = candidate.origin;

  // Anyone able to change a plugin file or its folder could run code inside every training job.
  static const TrustedIds me = this_user();
  if (const Status safe = plugin_permissions(candidate.path, candidate.named, me); !safe) {
    if (!allow_insecure) return refused(std::move(opened), safe.why_not() + " (or --allow-insecure-plugins)");
    opened.record.warning = safe.why_not();
  }

  // Boost.DLL reports only a generic error code; the loader's own message (which library
  // is missing, which symbol is undefined) is still waiting in dlerror(), so read it.
  ::dlerror();
  boost::dll::fs::error_code ec;
  opened.library.load(candidate.path, ec,
                      // rtld_now: an unresolved function is a refusal now, not a crash at its first call
                      boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (ec || !opened.library.is_loaded()) {
    const char* loader_message = ::dlerror();
    return refused(std::move(opened), "cannot be loaded: " +
                                          (loader_message ? std::string(loader_message) : ec.message()));
  }

  if (!opened.library.has(PLUGTRAIN_INFO_SYMBOL))
    return refused(std::move(opened), std::string("not a plugtrain plugin (no ") +
                                          PLUGTRAIN_INFO_SYMBOL + " symbol)");

  const plugtrain_plugin_info* info = nullptr;
  try {
    info = opened.library.get<const plugtrain_plugin_info*()>(PLUGTRAIN_INFO_SYMBOL)();
  } catch (const std::exception& e) {
    return refused(std::move(opened), std::string("handshake threw: ") + e.what());
  }
  if (!info) return refused(std::move(opened), "its handshake returned no struct (use PLUGTRAIN_PLUGIN)");
  // Fields are only appended, so struct_size says which exist (abi.h): the host needs those up to
  // `name` and reads later ones where the plugin has them, never comparing with its own sizeof.
  if (!PLUGTRAIN_INFO_HAS(info, name))
    return refused(std::move(opened), "its handshake is " + std::to_string(info->struct_size) +
                                          " bytes, shorter than the " + std::to_string(PLUGTRAIN_INFO_FIELD_END(name)) +
                                          " this host reads: rebuild it with PLUGTRAIN_PLUGIN");

  PluginHandshake& h = opened.record.handshake;
  h.abi_major = info->sdk_abi_major;
  h.abi_minor = info->sdk_abi_minor;
  // SDK 3 numbered its one kind 1 to 4, where 4.0 has bits: read so, a refusal names the right kind.
  const bool numbered = info->sdk_abi_major < 4 && info->kinds >= 1 && info->kinds <= 4;
  h.kinds = numbered ? 1u << (info->kinds - 1) : info->kinds;
  h.kind = kind_names(h.kinds);
  h.name = safe(info->name);
  h.version = PLUGTRAIN_INFO_HAS(info, version) ? safe(info->version) : std::string();
  h.description = PLUGTRAIN_INFO_HAS(info, description) ? safe(info->description) : std::string();
  h.torch_version = safe(info->torch_version);
  h.cxx_abi = safe(info->cxx_abi);
  h.compiler = safe(info->compiler);
  opened.record.has_handshake = true;

  if (Status sdk = sdk_fits(h.abi_major, h.abi_minor); !sdk) return refused(std::move(opened), sdk.why_not());
  if (h.torch_version != host_torch_version())
    return refused(std::move(opened), "built against LibTorch " + h.torch_version +
                                          ", host uses LibTorch " + host_torch_version());
  if (h.cxx_abi != host_cxx_abi())
    return refused(std::move(opened), "C++ ABI differs: plugin '" + h.cxx_abi + "', host '" +
                                          host_cxx_abi() + "'");
  if (h.kinds == 0 || unknown_kinds(h.kinds) != 0)
    return refused(std::move(opened), "its handshake names plugin kinds " + std::to_string(h.kinds) +
                                          ", which this host does not know (it knows " + kind_names(~0u, ", ") + ")");
  if (h.name.empty()) return refused(std::move(opened), "plugin has no name");

  opened.record.status = PluginStatus::loaded;
  return opened;
}

}  // namespace plugtrain
