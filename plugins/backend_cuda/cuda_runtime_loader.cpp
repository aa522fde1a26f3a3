#include "cuda_runtime_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace plugtrain::cuda {

namespace {

std::string default_runtime_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&default_runtime_path), &info) == 0 || !info.dli_fname) return "";
  return (std::filesystem::path(info.dli_fname).parent_path() / "cuda" / "plugtrain_cuda_runtime.so").string();
}

// The host refuses a plugin that others could change (core/plugins/plugin_permissions.h); the
// runtime this plugin loads itself is held to it too, or it would be a way around it: an absolute
// path, and neither the file nor its folder world-writable nor owned by another user than root or
// this one. (A group-writable one is left to the host's rule, which knows private groups.)
std::string why_not_trusted(const std::string& path) {
  if (path.empty()) return "the plugin's own folder cannot be told (dladdr), so neither can its cuda/ runtime";
  if (path.front() != '/')
    return "PLUGTRAIN_CUDA_RUNTIME '" + path + "' is not an absolute path (it would depend on the working directory)";
  // A symlink is judged by where it leads: the real file and the real folder holding it (a link
  // into a world-writable folder is no safer than the file there), and the link's own folder.
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) real = std::filesystem::weakly_canonical(path, ec);  // missing: dlopen says so
  if (ec) real = path;
  std::vector<std::string> checked{real.string(), real.parent_path().string()};
  const std::string link_folder = std::filesystem::path(path).parent_path().string();
  if (link_folder != checked.back()) checked.push_back(link_folder);
  for (const std::string& p : checked) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) continue;  // dlopen says what is missing
    if (st.st_mode & S_IWOTH) return p + " is world-writable: chmod o-w " + p;
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) return p + " is owned by another user than root or you";
  }
  return "";
}

CudaRuntime load() {
  CudaRuntime r;
  const char* override_path = std::getenv("PLUGTRAIN_CUDA_RUNTIME");
  r.path = override_path && *override_path ? override_path : default_runtime_path();
  r.error = why_not_trusted(r.path);
  if (!r.error.empty()) return r;
  ::dlerror();
  // Never closed: CUDA libraries must not be unloaded while the process runs.
  void* handle = ::dlopen(r.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    r.error = why ? why : ("cannot load " + r.path);
    return r;
  }
  r.runtime_version =
      reinterpret_cast<plugtrain_cuda_runtime_version_fn>(::dlsym(handle, PLUGTRAIN_CUDA_RUNTIME_VERSION_SYMBOL));
  r.memory_query =
      reinterpret_cast<plugtrain_cuda_memory_query_fn>(::dlsym(handle, PLUGTRAIN_CUDA_MEMORY_QUERY_SYMBOL));
  r.create_nccl = reinterpret_cast<plugtrain_cuda_create_nccl_fn>(::dlsym(handle, PLUGTRAIN_CUDA_CREATE_NCCL_SYMBOL));
  r.nccl_version =
      reinterpret_cast<plugtrain_cuda_nccl_version_fn>(::dlsym(handle, PLUGTRAIN_CUDA_NCCL_VERSION_SYMBOL));
  r.graph_create =
      reinterpret_cast<plugtrain_cuda_graph_create_fn>(::dlsym(handle, PLUGTRAIN_CUDA_GRAPH_CREATE_SYMBOL));
  r.graph_warm_up = reinterpret_cast<plugtrain_cuda_graph_run_fn>(::dlsym(handle, PLUGTRAIN_CUDA_GRAPH_WARM_UP_SYMBOL));
  r.graph_capture = reinterpret_cast<plugtrain_cuda_graph_run_fn>(::dlsym(handle, PLUGTRAIN_CUDA_GRAPH_CAPTURE_SYMBOL));
  r.graph_replay =
      reinterpret_cast<plugtrain_cuda_graph_replay_fn>(::dlsym(handle, PLUGTRAIN_CUDA_GRAPH_REPLAY_SYMBOL));
  r.graph_destroy =
      reinterpret_cast<plugtrain_cuda_graph_destroy_fn>(::dlsym(handle, PLUGTRAIN_CUDA_GRAPH_DESTROY_SYMBOL));
  r.host_waits = reinterpret_cast<plugtrain_cuda_host_waits_fn>(::dlsym(handle, PLUGTRAIN_CUDA_HOST_WAITS_SYMBOL));
  r.host_waits_by_cause = reinterpret_cast<plugtrain_cuda_host_waits_by_cause_fn>(
      ::dlsym(handle, PLUGTRAIN_CUDA_HOST_WAITS_BY_CAUSE_SYMBOL));
  if (!r.runtime_version || !r.memory_query || !r.create_nccl || !r.nccl_version || !r.graph_create ||
      !r.graph_warm_up || !r.graph_capture || !r.graph_replay || !r.graph_destroy || !r.host_waits ||
      !r.host_waits_by_cause) {
    r.error = r.path + " is not plugtrain's CUDA runtime part (symbols missing)";
    return r;
  }
  r.loaded = true;
  return r;
}

}  // namespace

const CudaRuntime& cuda_runtime() {
  static const CudaRuntime runtime = load();
  return runtime;
}

}  // namespace plugtrain::cuda
