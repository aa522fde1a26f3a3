#include "sweep/slurm_commands.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "util/text.h"

namespace plugtrain {

namespace fs = std::filesystem;

std::optional<fs::path> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
  }
  return std::nullopt;
}

Result<CommandOutput> run_command(const std::string& program, const std::vector<std::string>& arguments) {
  const std::optional<fs::path> found = find_on_path(program);
  if (!found) return WhyNot{"no " + program + " on PATH (is this a Slurm login node? PATH: " +
                            std::string(std::getenv("PATH") ? std::getenv("PATH") : "") + ")"};
  // The output goes through a file of our own: Slurm's commands print little, and a file needs
  // no reader thread while the child runs.
  char name[] = "/tmp/plugtrain-slurm-XXXXXX";
  const int fd = ::mkstemp(name);
  if (fd < 0) return WhyNot{"cannot make a temporary file for " + program + "'s output"};
  ::close(fd);
  SpawnSpec spec;
  spec.argv = {program};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.program = *found;
  spec.output_file = name;
  spec.errors_to_output = true;
  spec.what = program;
  Result<ChildProcess> child = spawn(spec);
  if (!child) {
    fs::remove(name);
    return WhyNot{child.why_not()};
  }
  CommandOutput out;
  out.status = wait_for(child.value().pid);
  std::ifstream in(name);
  std::stringstream text;
  text << in.rdbuf();
  out.output = text.str();
  fs::remove(name);
  return out;
}

std::optional<std::map<std::string, std::string>> queued_array_tasks(const std::string& job_name) {
  Result<CommandOutput> r = run_command("squeue", {"--noheader", "--array", "--name=" + job_name, "--format=%i %T"});
  if (!r || !r.value().status.succeeded()) return std::nullopt;
  std::map<std::string, std::string> states;
  std::istringstream lines(r.value().output);
  for (std::string id, state; lines >> id >> state;) states[id] = state;
  return states;
}

std::map<std::string, std::string> accounted_array_tasks(const std::vector<std::string>& job_ids) {
  std::map<std::string, std::string> states;
  if (job_ids.empty()) return states;
  Result<CommandOutput> r =
      run_command("sacct", {"--noheader", "--parsable2", "--allocations", "--jobs=" + join(job_ids, ","),
                            "--format=JobID,State"});
  // "Slurm accounting storage is disabled" and the like: no accounting to read here.
  if (!r || !r.value().status.succeeded()) return states;
  std::istringstream lines(r.value().output);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t bar = line.find('|');
    if (bar == std::string::npos) continue;
    std::string state = line.substr(bar + 1);
    state = state.substr(0, state.find(' '));  // "CANCELLED by 0" -> "CANCELLED"
    states[line.substr(0, bar)] = state;
  }
  return states;
}

std::optional<std::size_t> slurm_node_count(const std::string& partition) {
  std::vector<std::string> arguments{"--noheader", "--Node", "--format=%N"};
  if (!partition.empty()) arguments.push_back("--partition=" + partition);
  Result<CommandOutput> r = run_command("sinfo", arguments);
  if (!r || !r.value().status.succeeded()) return std::nullopt;
  // One line per node and partition: a node in two partitions is counted once.
  std::set<std::string> nodes;
  std::istringstream lines(r.value().output);
  for (std::string node; lines >> node;) nodes.insert(node);
  if (nodes.empty()) return std::nullopt;  // a partition sinfo does not know: sbatch says why
  return nodes.size();
}

}  // namespace plugtrain
