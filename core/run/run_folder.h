// Where a run's files go: runs/<name>/version_N (Lightning's layout), its checkpoints folder,
// and the checkpoint `--resume last` continues from.
#pragma once

#include <filesystem>
#include <string>

#include "config/experiment.h"
#include "run/resume_request.h"

namespace plugtrain {

// N of a folder named version_N; -1 for any other name.
int run_version(const std::filesystem::path& folder);

// runs/<name>/version_N with the next free N.
std::filesystem::path new_run_folder(const Experiment& e);

// A resumed run continues the folder its checkpoint lives in; otherwise a new version.
std::filesystem::path run_folder_for(const Experiment& e, const std::filesystem::path& resume_from);

std::filesystem::path checkpoint_folder(const Experiment& e, const std::filesystem::path& run_folder);

// "last": the newest last.ckpt of this experiment; "auto": the same, or an empty path (a fresh
// start) when there is none; anything else is the path given. Throws CheckpointError when
// "last" finds none.
std::filesystem::path resume_checkpoint(const Experiment& e, const ResumeRequest& resume);

}  // namespace plugtrain
