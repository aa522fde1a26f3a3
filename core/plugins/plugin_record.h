// What the host knows about one plugin file: where it came from, its handshake, and
// whether it was loaded, refused (and why) or shadowed by an earlier plugin of the same name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace plugtrain {

enum class PluginStatus { loaded, refused, shadowed };

inline const char* to_string(PluginStatus s) {
  switch (s) {
    case PluginStatus::loaded: return "loaded";
    case PluginStatus::refused: return "refused";
    case PluginStatus::shadowed: return "shadowed";
  }
  return "refused";
}

struct PluginHandshake {
  std::uint32_t abi_major = 0;
  std::uint32_t abi_minor = 0;
  std::uint32_t kinds = 0;  // PLUGTRAIN_KIND_* bits (plugin_kinds.h)
  std::string kind;         // their names, "backend" or "models,datasets"
  std::string name;
  std::string version;
  std::string description;
  std::string torch_version;
  std::string cxx_abi;
  std::string compiler;
};

struct PluginRecord {
  // Whether its handshake names any of these kinds (PLUGTRAIN_KIND_* bits).
  bool has_kind(std::uint32_t bits) const { return has_handshake && (handshake.kinds & bits) != 0; }

  std::filesystem::path path;
  std::string origin;  // the search-path entry that found it
  PluginStatus status = PluginStatus::refused;
  std::string reason;   // why refused / shadowed
  std::string warning;  // loaded although others could change it (--allow-insecure-plugins): why
  bool has_handshake = false;
  PluginHandshake handshake;

  // Name for messages: the plugin's own name once known, else the file name.
  std::string display_name() const {
    return has_handshake && !handshake.name.empty() ? handshake.name : path.filename().string();
  }
};

}  // namespace plugtrain
