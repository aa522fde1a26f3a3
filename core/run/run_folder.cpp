#include "run/run_folder.h"

#include <regex>

#include "checkpoint/checkpoint.h"

namespace plugtrain {

namespace fs = std::filesystem;

int run_version(const fs::path& folder) {
  static const std::regex pattern("version_([0-9]+)");
  std::smatch m;
  const std::string name = folder.filename().string();
  return std::regex_match(name, m, pattern) ? std::stoi(m[1]) : -1;
}

fs::path new_run_folder(const Experiment& e) {
  const fs::path base = fs::path(e.experiment.output) / e.experiment.name;
  int next = 0;
  if (fs::is_directory(base))
    for (const auto& entry : fs::directory_iterator(base)) next = std::max(next, run_version(entry.path()) + 1);
  return base / ("version_" + std::to_string(next));
}

fs::path run_folder_for(const Experiment& e, const fs::path& resume_from) {
  if (!resume_from.empty() && resume_from.parent_path().filename() == "checkpoints")
    return resume_from.parent_path().parent_path();
  return new_run_folder(e);
}

fs::path checkpoint_folder(const Experiment& e, const fs::path& run_folder) {
  return e.checkpoint.folder.empty() ? run_folder / "checkpoints" : fs::path(e.checkpoint.folder);
}

fs::path resume_checkpoint(const Experiment& e, const ResumeRequest& resume) {
  if (!resume.keyword) return resume.checkpoint;
  const bool automatic = resume.automatic();  // no checkpoint yet: a fresh start
  if (!e.checkpoint.folder.empty()) {
    const fs::path last = fs::path(e.checkpoint.folder) / "last.ckpt";
    return automatic && !fs::exists(last) ? fs::path() : last;
  }
  const fs::path base = fs::path(e.experiment.output) / e.experiment.name;
  fs::path newest;
  int newest_version = -1;
  if (fs::is_directory(base))
    for (const auto& entry : fs::directory_iterator(base)) {
      const int v = run_version(entry.path());
      if (v > newest_version && fs::exists(entry.path() / "checkpoints" / "last.ckpt")) {
        newest_version = v;
        newest = entry.path() / "checkpoints" / "last.ckpt";
      }
    }
  if (newest.empty() && !automatic)
    throw CheckpointError("--resume last: no " + (base / "version_*" / "checkpoints" / "last.ckpt").string() +
                          " found (has this experiment run with checkpoints?)");
  return newest;
}

}  // namespace plugtrain
