#include "distributed/collectives.h"

#include <algorithm>
#include <csignal>
#include <map>
#include <thread>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>

#include "distributed/c10d_access.h"
#include "util/text.h"

namespace plugtrain {

namespace {

std::string key(const char* what, int rank) { return std::string("plugtrain/") + what + "/" + std::to_string(rank); }

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<std::uint8_t>& b) { return {b.begin(), b.end()}; }

// Starting takes as long as the slowest rank needs to load data and plugins: the rendezvous
// gets at least a minute even when collectives may only wait a few seconds.
std::chrono::milliseconds rendezvous_timeout(std::chrono::milliseconds collective) {
  return std::max(collective, std::chrono::milliseconds(60000));
}

// The key prefix of this attempt of the group. Without torchrun's agent store, the store is
// rank 0's own and new with every start: the attempt is the restart count. Torchrun's agents
// share one store across their restarts, and their restart counts differ: an agent counts only
// its own workers' failures, so the agent that restarts because another node's worker died
// gives its workers the old count (TORCHELASTIC_RESTART_COUNT 0 beside the other node's 1), and
// the ranks would wait for each other under different prefixes. So rank 0 numbers the attempts
// in the store itself (a counter it adds 1 to), and every other rank joins the newest number it
// has not joined before: when the counter still holds the number an earlier worker of its rank
// joined, rank 0 of this attempt has not counted yet, and the rank waits for the next.
std::string torchrun_attempt_prefix(c10d::Store& store, int rank) {
  const std::string counter = "plugtrain/attempts";
  std::int64_t attempt = 0;
  if (rank == 0) {
    attempt = store.add(counter, 1);
  } else {
    attempt = std::max<std::int64_t>(store.add(counter, 0), 1);
    if (store.add("plugtrain/attempt/" + std::to_string(attempt) + "/joined/" + std::to_string(rank), 1) > 1) {
      ++attempt;
      store.add("plugtrain/attempt/" + std::to_string(attempt) + "/joined/" + std::to_string(rank), 1);
    }
  }
  const std::string opened = "plugtrain/attempt/" + std::to_string(attempt) + "/opened";
  if (rank == 0)
    store.set(opened, bytes("1"));
  else
    store.wait({opened});
  return "/plugtrain/attempt_" + std::to_string(attempt);
}

}  // namespace

Collectives::Collectives(const World& world, std::chrono::milliseconds timeout, c10::DeviceType device_type,
                         const std::string& interface)
    : world_(world), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  // As Python does at startup (so torch.distributed never meets it): a socket write to a rank
  // that has died fails with EPIPE, which c10d reports as that rank not answering, instead of
  // SIGPIPE killing this rank before it can name the one at fault.
  std::signal(SIGPIPE, SIG_IGN);
  network_ = find_rendezvous_network(world_, interface);
  export_interface(network_);
  const std::string where = network_.address + ":" + std::to_string(world.master_port);
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(world.master_port);
    // Under torchrun's agent the store already exists; otherwise rank 0 serves it.
    options.isServer = !world.agent_store && world.rank == 0;
    // As torch.distributed does: every rank checks in, and the server waits for all of them.
    options.numWorkers = static_cast<std::size_t>(world.world_size);
    options.waitWorkers = true;
    options.timeout = rendezvous_timeout(timeout);
    c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::TCPStore>(network_.address, options);
    impl_->tcp_store = store;
    // A restarted attempt's keys stay apart from the attempt before.
    const std::string prefix =
        world.agent_store ? torchrun_attempt_prefix(*store, world.rank) : "/worker/attempt_" + world.restart_count;
    impl_->store = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
  } catch (const std::exception& e) {
    throw DistributedError("rank " + std::to_string(world.rank) + ": cannot reach the rendezvous store at " + where +
                           (world.rank == 0 && !world.agent_store ? " (serving it on that port failed)" : "") + ": " +
                           first_line(e.what()));
  }
  try {
    // Connecting waits for the slowest rank to start; a collective should not wait that long.
    auto options = c10d::ProcessGroupGloo::Options::create_default(rendezvous_timeout(timeout));
    // Gloo's own worker threads (2 by default) compete with training for the cores the ranks
    // of this machine share; measured on 2 cores with 2 ranks, 1 thread made a 1 MB
    // all-reduce 3.4x faster (2.8 -> 0.83 ms).
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    options->threads = int(std::clamp<unsigned>(cores / unsigned(std::max(1, world.local_world_size)), 1u, 2u));
    // Bound to the interface that reaches the other ranks, never to whatever this host's name
    // resolves to (often 127.0.0.1, which Gloo would hand to ranks on other machines).
    options->devices.clear();
    for (const std::string& name : split_interfaces(network_.interface))
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
    auto gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, world.rank, world.world_size, options);
    impl_->group = c10::make_intrusive<c10d::ProcessGroup>(impl_->store, world.rank, world.world_size);
    impl_->group->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, gloo);
    // Gloo carries the device's tensors too until the device's own collective is attached
    // (attach_device_collective), or for good when its backend has none.
    if (device_type != c10::DeviceType::CPU)
      impl_->group->setBackend(device_type, c10d::ProcessGroup::BackendType::GLOO, gloo);
    impl_->group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
    gloo->setTimeout(timeout);
    impl_->store->setTimeout(timeout);
    // Under Slurm a lost rank is named with its node (one machine's ranks need no node name).
    if (!world_.node.empty()) impl_->store->set(key("node", world.rank), bytes(world_.node));
  } catch (const std::exception& e) {
    throw DistributedError("rank " + std::to_string(world.rank) + ": the " + std::to_string(world.world_size) +
                           " ranks did not all connect (Gloo, through " + where + ", within " +
                           std::to_string(rendezvous_timeout(timeout).count() / 1000) + " s): " + first_line(e.what()));
  }
}

Collectives::~Collectives() {
  if (!impl_->device_backend) return;
  try {
    if (impl_->failed)
      impl_->device_backend->abort();  // its peers may be gone: do not wait for them
    else
      impl_->device_backend->shutdown();
  } catch (const std::exception&) {
    // c10d's errors all derive from std::exception. The collectives are over by now: a device
    // collective that cannot shut down or abort cleanly leaves nothing this rank still needs,
    // and a destructor may not throw.
  }
}

void Collectives::all_reduce_sum(std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  try {
    // One coalesced call: a single round trip for several small sums.
    impl_->group->allreduce_coalesced(tensors)->wait(timeout_);
  } catch (const std::exception& e) {
    throw CollectiveError("all-reduce: " + first_line(e.what()));
  }
}

PendingCollective::PendingCollective(std::shared_ptr<Work> work, std::string what, std::chrono::milliseconds timeout)
    : work_(std::move(work)), what_(std::move(what)), timeout_(timeout) {}

void PendingCollective::wait() {
  if (!work_) return;
  const std::shared_ptr<Work> work = std::move(work_);
  try {
    work->work->wait(timeout_);
  } catch (const std::exception& e) { throw CollectiveError(what_ + ": " + first_line(e.what())); }
}

void Collectives::broadcast_from_rank_zero(std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  // c10d's coalesced broadcast (as GradientSync shares rank 0's state): one round trip per
  // bucket, not per tensor; one call per device, since fsdp shares host parameters and device
  // buffers together.
  std::map<std::string, std::vector<at::Tensor>> by_device;
  for (const at::Tensor& t : tensors) by_device[t.device().str()].push_back(t);
  try {
    for (auto& [device, group] : by_device) c10d::broadcast_coalesced(impl_->group, group, 250 * 1024 * 1024, 0);
  } catch (const std::exception& e) { throw CollectiveError("broadcast: " + first_line(e.what())); }
}

PendingCollective Collectives::all_gather_into(std::vector<at::Tensor>& full, std::vector<at::Tensor>& shards) {
  try {
    auto work = std::make_shared<PendingCollective::Work>();
    work->work = impl_->group->allgather_into_tensor_coalesced(full, shards);
    return PendingCollective(std::move(work), "all-gather", timeout_);
  } catch (const std::exception& e) { throw CollectiveError("all-gather: " + first_line(e.what())); }
}

PendingCollective Collectives::reduce_scatter_sum(std::vector<at::Tensor>& shards, std::vector<at::Tensor>& full) {
  try {
    auto work = std::make_shared<PendingCollective::Work>();
    work->work = impl_->group->reduce_scatter_tensor_coalesced(shards, full);
    return PendingCollective(std::move(work), "reduce-scatter", timeout_);
  } catch (const std::exception& e) { throw CollectiveError("reduce-scatter: " + first_line(e.what())); }
}

std::string Collectives::rank_text(int rank) {
  std::string node;
  try {
    if (impl_->store->check({key("node", rank)})) node = text(impl_->store->get(key("node", rank)));
  } catch (const std::exception&) {
    // The store's server went with a failed rank: the rank is named without its node.
  }
  return "rank " + std::to_string(rank) + (node.empty() ? "" : " (node " + node + ")");
}

void Collectives::require_same(const std::string& what, const std::string& value) {
  std::vector<std::string> keys;
  for (int r = 0; r < size(); ++r) keys.push_back(key(what.c_str(), r));
  try {
    impl_->store->set(keys[rank()], bytes(value));
    impl_->store->wait(keys, rendezvous_timeout(timeout_));
  } catch (const std::exception& e) {
    throw DistributedError("rank " + std::to_string(rank()) + ": the ranks did not all say which " + what +
                           " they run: " + first_line(e.what()));
  }
  const std::string first = text(impl_->store->get(keys[0]));
  for (int r = 1; r < size(); ++r)
    if (const std::string other = text(impl_->store->get(keys[r])); other != first)
      throw DistributedError(rank_text(r) + " runs another " + what + " than " + rank_text(0) + " (" + other + " vs " +
                             first + "): every node must read the same experiment file and --set");
}

void Collectives::note_step(std::int64_t step) {
  const auto now = std::chrono::steady_clock::now();
  if (step == last_noted_step_ || now - last_note_ < std::chrono::milliseconds(500)) return;
  impl_->store->set(key("step", rank()), bytes(std::to_string(step)));
  last_noted_step_ = step;
  last_note_ = now;
}

void Collectives::announce_failure(const std::string& message) noexcept {
  impl_->failed = true;
  try {
    impl_->store->set(key("error", rank()), bytes(first_line(message)));
  } catch (const std::exception&) {
    // The store's server may have gone with a failed rank. The message is only a courtesy to
    // the others, which name this rank without it; this rank reports `message` itself.
  }
}

std::string Collectives::explain_failure(const std::string& what_failed, const std::exception& error) {
  impl_->failed = true;
  const std::string me = "rank " + std::to_string(rank()) + (world_.node.empty() ? "" : " (node " + world_.node + ")");
  const std::string cause = first_line(error.what());
  try {
    // The store's server may be in a hung process (rank 0 serves it when launched by hand):
    // ask it briefly.
    impl_->store->setTimeout(std::chrono::seconds(3));
    impl_->tcp_store->setTimeout(std::chrono::seconds(3));
    auto& store = *impl_->store;
    store.set(key("noticed", rank()), bytes("1"));
    // Every rank still running notices the same failure within moments; give them that long.
    std::vector<int> silent;
    std::string reasons;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (;;) {
      silent.clear();
      reasons.clear();
      for (int r = 0; r < size(); ++r) {
        if (r == rank()) continue;
        if (store.check({key("error", r)}))
          reasons += "; " + rank_text(r) + " failed: " + text(store.get(key("error", r)));
        else if (!store.check({key("noticed", r)}))
          silent.push_back(r);
      }
      if (!reasons.empty() || silent.empty() || std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::string out = me + ": " + what_failed + " failed";
    if (!reasons.empty()) return out + reasons + " (here: " + cause + ")";
    for (int r : silent) {
      std::string last = "never reported a step";
      if (store.check({key("step", r)})) last = "last reported step " + text(store.get(key("step", r)));
      out += "; " + rank_text(r) + " stopped answering (it died or hung; " + last + ")";
    }
    return out + " (" + cause + ")";
  } catch (const std::exception&) {
    if (!world_.agent_store && rank() != 0)
      return me + ": " + what_failed + " failed and the rendezvous store does not answer: rank 0, which serves it, died or hung (" +
             cause + ")";
    return me + ": " + what_failed + " failed (" + cause + ")";
  }
}

}  // namespace plugtrain
