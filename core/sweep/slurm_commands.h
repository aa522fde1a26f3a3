// Slurm's own commands (sbatch, squeue, sacct), found on PATH and run with their output
// captured. plugtrain schedules nothing across machines: it hands Slurm job arrays and asks
// Slurm what became of them.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"
#include "util/subprocess.h"

namespace plugtrain {

// The program's path on PATH, or nullopt.
std::optional<std::filesystem::path> find_on_path(const std::string& program);

struct CommandOutput {
  ExitStatus status;
  std::string output;  // stdout and stderr together, as a person would see them
};

// Runs `program` (looked up on PATH) with `arguments`; a WhyNot when it is not there or cannot start.
Result<CommandOutput> run_command(const std::string& program, const std::vector<std::string>& arguments);

// The states Slurm reports for the array tasks of the jobs named `job_name`, by "JOBID_INDEX"
// (squeue -r: PENDING, RUNNING, ...; a task squeue no longer lists has ended). nullopt when
// squeue cannot be asked (no squeue, no controller): the caller then relies on the files.
std::optional<std::map<std::string, std::string>> queued_array_tasks(const std::string& job_name);

// sacct's final states (COMPLETED, FAILED, TIMEOUT, OUT_OF_MEMORY, CANCELLED...) by
// "JOBID_INDEX" for these jobs, where the cluster keeps accounting; empty where it does not.
std::map<std::string, std::string> accounted_array_tasks(const std::vector<std::string>& job_ids);

// How many nodes the cluster (or `partition`, when given) has, by sinfo; nullopt when sinfo
// cannot say.
std::optional<std::size_t> slurm_node_count(const std::string& partition);

}  // namespace plugtrain
