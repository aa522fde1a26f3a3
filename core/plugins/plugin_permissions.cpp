#include "plugins/plugin_permissions.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <system_error>
#include <vector>

namespace plugtrain {
namespace fs = std::filesystem;

namespace {

std::string user_name(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) return found->pw_name;
  return std::to_string(uid);
}

std::string group_name(gid_t gid) {
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  if (::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) return found->gr_name;
  return std::to_string(gid);
}

std::string mode_text(mode_t mode) {
  std::string s = S_ISDIR(mode) ? "d" : S_ISLNK(mode) ? "l" : "-";
  const char* rwx = "rwx";
  for (int i = 8; i >= 0; --i) s += (mode & (1u << i)) ? rwx[(8 - i) % 3] : '-';
  if (mode & S_ISUID) s[3] = (mode & S_IXUSR) ? 's' : 'S';
  if (mode & S_ISGID) s[6] = (mode & S_IXGRP) ? 's' : 'S';
  if (mode & S_ISVTX) s[9] = (mode & S_IXOTH) ? 't' : 'T';
  return s;
}

// file: the plugin itself; searched: a folder whose every plugin is loaded, so whoever can add a
// file to it can add code; holding: the folder of a file named on purpose, where a sticky bit
// keeps others from replacing that file.
enum class Role { file, searched, holding };

// "" when only root and `me` can change the path; else what is wrong and the fix, in one line.
// The names are looked up only for a problem: a name service can be slow, and most paths are fine.
std::string problem_of(const fs::path& path, const struct stat& st, Role role, const TrustedIds& me) {
  const bool foreign_owner = st.st_uid != 0 && st.st_uid != me.uid;
  const bool world = st.st_mode & S_IWOTH;
  const bool group = (st.st_mode & S_IWGRP) && !(me.private_group && st.st_gid == *me.private_group);
  const bool sticky = role != Role::file && (st.st_mode & S_ISVTX);
  if (!foreign_owner && (!(world || group) || (sticky && role == Role::holding))) return "";

  const std::string what = (role == Role::file ? "file " : "folder ") + path.string();
  const std::string facts =
      " (" + mode_text(st.st_mode) + " " + user_name(st.st_uid) + ":" + group_name(st.st_gid) + ")";
  if (foreign_owner)
    return what + " is owned by " + user_name(st.st_uid) + facts + ", not by you or root: chown root " + path.string() +
           ", or copy the plugin into a folder of your own";
  const std::string writable = world ? " is world-writable" : " is group-writable";
  if (sticky)
    return what + writable + facts +
           ": its sticky bit keeps others from replacing a plugin there, not from adding one: keep plugins in a "
           "folder only you and root can write";
  return what + writable + facts + ": chmod " + (world && group ? "go-w " : world ? "o-w " : "g-w ") + path.string();
}

Status check(const fs::path& path, Role role, const TrustedIds& me) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return WhyNot{"cannot stat " + std::string(role == Role::file ? "file " : "folder ") + path.string() + ": " +
                  std::strerror(errno)};
  if (std::string problem = problem_of(path, st, role, me); !problem.empty()) return WhyNot{std::move(problem)};
  return Status::fine();
}

fs::path canonical_or_same(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : c;
}

}  // namespace

TrustedIds this_user() {
  TrustedIds me;
  me.uid = ::geteuid();
  std::vector<char> pw_buffer(16384), gr_buffer(16384);
  passwd pw{};
  passwd* user = nullptr;
  if (::getpwuid_r(me.uid, &pw, pw_buffer.data(), pw_buffer.size(), &user) != 0 || !user) return me;
  group gr{};
  group* primary = nullptr;
  if (::getgrgid_r(user->pw_gid, &gr, gr_buffer.data(), gr_buffer.size(), &primary) != 0 || !primary) return me;
  if (std::strcmp(primary->gr_name, user->pw_name) != 0) return me;
  for (char** member = primary->gr_mem; member && *member; ++member)
    if (std::strcmp(*member, user->pw_name) != 0) return me;
  me.private_group = user->pw_gid;
  return me;
}

PathOwnership search_entry_ownership(const fs::path& entry, const TrustedIds& me) {
  PathOwnership o;
  o.path = entry;
  struct stat st {};
  if (::stat(entry.c_str(), &st) != 0) return o;
  o.exists = true;
  o.owner = user_name(st.st_uid);
  o.group = group_name(st.st_gid);
  o.mode = mode_text(st.st_mode);
  if (S_ISDIR(st.st_mode)) {
    o.problem = problem_of(entry, st, Role::searched, me);
  } else if (Status safe = plugin_permissions(entry, true, me); !safe) {
    o.problem = safe.why_not();
  }
  return o;
}

Status plugin_permissions(const fs::path& file, bool named, const TrustedIds& me) {
  if (Status s = check(file, Role::file, me); !s) return s;
  fs::path listed = file.parent_path();
  if (listed.empty()) listed = ".";
  if (Status s = check(listed, named ? Role::holding : Role::searched, me); !s) return s;
  // Through a symbolic link the file lives elsewhere: whoever can write that folder can replace it.
  const fs::path real = canonical_or_same(file).parent_path();
  if (real != canonical_or_same(listed))
    if (Status s = check(real, Role::holding, me); !s) return s;
  return Status::fine();
}

namespace {

struct InsecureSetting {
  std::atomic<bool> allowed{false};
  std::mutex mutex;
  std::function<void(const std::string&)> warn;
  std::set<std::string> warned;  // files already warned about
};

InsecureSetting& insecure_setting() {
  static auto* setting = new InsecureSetting();  // leaked: hosts may load plugins until the very end
  return *setting;
}

}  // namespace

void allow_insecure_plugins(std::function<void(const std::string&)> warn) {
  InsecureSetting& s = insecure_setting();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.warn = std::move(warn);
  s.allowed = true;
}

bool insecure_plugins_allowed() { return insecure_setting().allowed; }

void warn_insecure_plugin(const fs::path& file, const std::string& line) {
  InsecureSetting& s = insecure_setting();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.warn && s.warned.insert(file.string()).second) s.warn(line);
}

}  // namespace plugtrain
