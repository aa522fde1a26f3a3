// Who could change a plugin before it is loaded. A plugin runs inside every job that loads it, so
// a plugin file, or a folder it is loaded from, that a user other than root and you can write is
// refused: group- or world-writable, or owned by another user. Not refused: a group-writable path
// whose group is your private group (a group named as you with no other member: Debian's user
// private groups, where umask 002 makes every file group-writable), and a sticky folder (/tmp) that
// holds a file named explicitly (others cannot replace a file of yours there; they could add new
// ones, so a sticky folder that is searched is refused). --allow-insecure-plugins loads such a plugin
// all the same, with a one-line warning. Only the folder a plugin is listed in and the folder it
// really lives in (through a symbolic link) are checked, not every folder above them.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "util/result.h"

namespace plugtrain {

// Whom the checks trust besides root.
struct TrustedIds {
  uid_t uid = 0;
  std::optional<gid_t> private_group;  // this user's private group, when it has one
};
TrustedIds this_user();

// A search-path entry or plugin file as `doctor` shows it.
struct PathOwnership {
  std::filesystem::path path;
  bool exists = false;
  std::string owner, group;  // names, or numeric ids where the system has no name
  std::string mode;          // as ls shows it: "drwxr-xr-x"
  std::string problem;       // "" when only root and you can change it; else one line with the fix
};

// A search-path entry (a folder searched, or a plugin file named) and, for a file, its folder.
PathOwnership search_entry_ownership(const std::filesystem::path& entry, const TrustedIds& me);

// The plugin file, the folder it was found in (searched, or holding a file named explicitly when
// `named`) and the folder it really lives in: the first problem, in one line with the fix.
Status plugin_permissions(const std::filesystem::path& file, bool named, const TrustedIds& me);

// --allow-insecure-plugins, for this whole process (the command line sets it once, before any
// plugin is loaded): every SearchOptions made afterwards allows insecure plugins, and `warn` gets
// one line for each plugin file loaded in spite of a problem, once per file.
void allow_insecure_plugins(std::function<void(const std::string&)> warn);
bool insecure_plugins_allowed();
void warn_insecure_plugin(const std::filesystem::path& file, const std::string& line);

}  // namespace plugtrain
