// One process at a time in a folder: an advisory lock (flock) on a file in it, which dies with
// the process that holds it, so a killed run never leaves a stale lock. The file holds the
// holder's pid for the refusal message.
#pragma once

#include <filesystem>
#include <string>

namespace plugtrain {

class FolderLock {
 public:
  // Creates the folder if needed. Throws Error naming the holder's pid when another process
  // holds the lock; `who` names the holder in that message (e.g. "plugtrain sweep").
  FolderLock(const std::filesystem::path& folder, const std::string& lock_file, const std::string& who);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

// True while a live process holds `lock_file` in `folder` (a run or sweep at work there).
bool folder_in_use(const std::filesystem::path& folder, const std::string& lock_file);

// Removes the temporary files (name.tmp-PID) that a killed writer left in `folder`: call it
// only while holding the folder's lock, when no other writer can be at work there.
void remove_stale_temporaries(const std::filesystem::path& folder);

}  // namespace plugtrain
