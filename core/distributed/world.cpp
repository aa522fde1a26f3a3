#include "distributed/world.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "distributed/slurm_hostlist.h"
#include "util/text.h"

extern char** environ;

namespace plugtrain {

namespace {

const std::string* find(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

int integer(const Environment& env, const std::string& name, int min_value) {
  const std::string* text = find(env, name);
  if (!text) throw DistributedError("environment variable " + name + " is not set (needed for a multi-process run)");
  try {
    std::size_t used = 0;
    const long v = std::stol(*text, &used);
    if (used == text->size() && v >= min_value && v <= 1 << 20) return int(v);
  } catch (const std::logic_error&) {
    // std::stol's invalid_argument or out_of_range: not an integer, said just below.
  }
  throw DistributedError("environment variable " + name + "='" + *text + "' is not an integer >= " +
                         std::to_string(min_value));
}

// The first of `names` that is set, for launchers that spell the same fact differently.
std::string first_set(const Environment& env, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (find(env, n)) return n;
  return "";
}

}  // namespace

Environment process_environment() {
  Environment env;
  for (char** p = environ; p && *p; ++p) {
    const std::string entry = *p;
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

namespace {

// Slurm and MPI variables also reach processes that are not ranks of a job step (a batch
// script's own shell has SLURM_PROCID=0), so they count only inside a step of several tasks.
bool slurm_or_mpi_world(const Environment& env, const std::string& rank_var) {
  auto number = [&](const char* name) -> long {
    const std::string* v = find(env, name);
    try {
      return v ? std::stol(*v) : -1;
    } catch (const std::exception&) {
      return -1;
    }
  };
  if (rank_var == "SLURM_PROCID") {
    const long step = std::max(number("SLURM_STEP_ID"), number("SLURM_STEPID"));
    return step >= 0 && step < 0xFFFFFFF0L && number("SLURM_NTASKS") > 1;  // batch/extern steps use 0xFFFFFFFx
  }
  return number(rank_var == "PMI_RANK" ? "PMI_SIZE" : "OMPI_COMM_WORLD_SIZE") > 1;
}

// Under Slurm a plain `srun plugtrain run exp.toml` must be enough: every task reads the same
// job variables, so they agree on the rendezvous without a flag. It is the step's first node,
// where Slurm starts task 0 (the job's list when no step list is given), and a port of the
// job's own: 15000 + SLURM_JOB_ID % 17000. Jobs sharing a node then differ unless their ids are
// 17000 apart, and 15000-31999 stays below Linux's ephemeral ports (32768-60999), which the
// kernel hands to outgoing connections and so could already be taken on the first node.
std::string slurm_master_addr(const Environment& env) {
  const std::string var = first_set(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  if (var.empty())
    throw DistributedError("environment variable MASTER_ADDR is not set, nor is SLURM_STEP_NODELIST or "
                           "SLURM_JOB_NODELIST (whose first host would be the rendezvous under Slurm)");
  const Result<std::string> host = first_slurm_host(env.at(var));
  if (!host)
    throw DistributedError("environment variable " + var + "='" + shortened(env.at(var), 200) +
                           "' is not a Slurm host list like node[01-04,07],gpu3: " + host.why_not());
  return host.value();
}

int slurm_master_port(const Environment& env) {
  const std::string var = first_set(env, {"SLURM_JOB_ID", "SLURM_JOBID"});
  if (var.empty())
    throw DistributedError("environment variable MASTER_PORT is not set, nor is SLURM_JOB_ID (the rendezvous port "
                           "under Slurm is 15000 + SLURM_JOB_ID % 17000)");
  const std::string& text = env.at(var);
  // Job ids pass 2^20 on busy clusters, so not integer(): any run of up to 18 digits.
  if (text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    throw DistributedError("environment variable " + var + "='" + shortened(text, 200) + "' is not a job id");
  return 15000 + int(std::stoll(text) % 17000);
}

// Tasks on this node. torchrun's LOCAL_WORLD_SIZE first; under Slurm the step's own
// tasks-per-node list (what srun actually started here, whatever --ntasks-per-node asked),
// then SLURM_NTASKS_PER_NODE (set only when that option was given), then Open MPI's.
int local_world_size(const Environment& env, const std::string& rank_var, int world_size) {
  if (find(env, "LOCAL_WORLD_SIZE")) return integer(env, "LOCAL_WORLD_SIZE", 1);
  const std::string list = rank_var == "SLURM_PROCID"
                               ? first_set(env, {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"})
                               : std::string();
  if (!list.empty()) {
    const int node = integer(env, "SLURM_NODEID", 0);
    const Result<int> tasks = slurm_tasks_on_node(env.at(list), node);
    if (!tasks)
      throw DistributedError("environment variable " + list + "='" + shortened(env.at(list), 200) +
                             "' does not give this node's tasks (SLURM_NODEID=" + std::to_string(node) +
                             "): " + tasks.why_not());
    return tasks.value();
  }
  const std::string var = first_set(env, {"SLURM_NTASKS_PER_NODE", "OMPI_COMM_WORLD_LOCAL_SIZE"});
  return var.empty() ? world_size : integer(env, var, 1);
}

}  // namespace

std::optional<World> world_from_environment(const Environment& env) {
  const std::string rank = first_set(env, {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"});
  if (rank.empty()) return std::nullopt;
  if (rank != "RANK" && !slurm_or_mpi_world(env, rank)) return std::nullopt;
  const std::string size = rank == "RANK"           ? "WORLD_SIZE"
                           : rank == "SLURM_PROCID" ? "SLURM_NTASKS"
                           : rank == "PMI_RANK"     ? "PMI_SIZE"
                                                    : "OMPI_COMM_WORLD_SIZE";
  World w;
  w.source = find(env, "PLUGTRAIN_LAUNCHED")       ? "plugtrain"
             : find(env, "TORCHELASTIC_RUN_ID")    ? "torchrun"
             : rank == "RANK"                      ? "launcher variables"
             : rank == "SLURM_PROCID"              ? "slurm"
                                                   : "mpi";
  w.rank = integer(env, rank, 0);
  w.world_size = integer(env, find(env, "WORLD_SIZE") ? "WORLD_SIZE" : size, 1);
  if (w.rank >= w.world_size)
    throw DistributedError("environment variable " + rank + "=" + std::to_string(w.rank) + " is not below the world size " +
                           std::to_string(w.world_size));
  const std::string local_rank = first_set(env, {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"});
  w.local_rank = local_rank.empty() ? w.rank : integer(env, local_rank, 0);
  w.local_world_size = local_world_size(env, rank, w.world_size);
  if (w.local_rank >= w.local_world_size)
    throw DistributedError("environment variable " + local_rank + "=" + std::to_string(w.local_rank) +
                           " is not below the local world size " + std::to_string(w.local_world_size));
  // MASTER_ADDR and MASTER_PORT, when given, win over what Slurm's variables would say.
  const bool slurm = rank == "SLURM_PROCID";
  const std::string* addr = find(env, "MASTER_ADDR");
  if (!addr && !slurm)
    throw DistributedError("environment variable MASTER_ADDR is not set (the host of rank 0, e.g. 127.0.0.1; " + rank +
                           " is set, so this is a multi-process run)");
  w.master_addr = addr ? *addr : slurm_master_addr(env);
  if (!addr) w.master_node = w.master_addr;
  if (const std::string* node = find(env, "SLURMD_NODENAME")) w.node = *node;
  w.master_port = find(env, "MASTER_PORT") || !slurm ? integer(env, "MASTER_PORT", 1) : slurm_master_port(env);
  if (w.master_port > 65535)
    throw DistributedError("environment variable MASTER_PORT='" + env.at("MASTER_PORT") + "' is not a TCP port");
  if (const std::string* agent = find(env, "TORCHELASTIC_USE_AGENT_STORE"))
    w.agent_store = *agent == "True" || *agent == "true" || *agent == "1";
  if (const std::string* restarts = find(env, "TORCHELASTIC_RESTART_COUNT")) w.restart_count = *restarts;
  return w;
}

}  // namespace plugtrain
