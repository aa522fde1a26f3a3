// bin/plugtrain of an installed tree. The real host (<prefix>/lib/plugtrain/plugtrain)
// links LibTorch, so on a machine without it the dynamic loader would stop it before main with
// its own message. This launcher links nothing but libc: it looks for LibTorch where the host
// will (LD_LIBRARY_PATH, the folder the install was configured with — or PLUGTRAIN_LIBTORCH_DIR
// when LibTorch lives elsewhere on this machine —, the system folders), says in one line what
// to install when it is not there, and otherwise becomes the host (execv: same pid, arguments,
// signals and exit status), with PLUGTRAIN_LIBTORCH_DIR first on its LD_LIBRARY_PATH.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool has_libtorch(const std::string& folder) {
  return !folder.empty() && access((folder + "/libtorch_cpu.so").c_str(), R_OK) == 0;
}

std::string libtorch_dir() {
  const char* moved = std::getenv("PLUGTRAIN_LIBTORCH_DIR");
  return moved && *moved ? moved : PLUGTRAIN_TORCH_RUNTIME_DIR;
}

std::vector<std::string> search_folders() {
  std::vector<std::string> folders;
  if (const char* env = std::getenv("LD_LIBRARY_PATH")) {
    std::string value(env);
    for (std::size_t start = 0, end; start <= value.size(); start = end + 1) {
      end = value.find(':', start);
      if (end == std::string::npos) end = value.size();
      folders.push_back(value.substr(start, end - start));
    }
  }
  folders.push_back(libtorch_dir());
  for (const char* system : {"/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"})
    folders.push_back(system);
  return folders;
}

std::string self_path() {
  std::vector<char> buffer(4096);
  const ssize_t n = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  return n > 0 ? std::string(buffer.data(), std::size_t(n)) : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  bool found = false;
  for (const std::string& folder : search_folders()) found = found || has_libtorch(folder);
  // Not in those folders: the dynamic loader's own cache (ldconfig) may still know it. Asked
  // only here, so the usual start loads nothing twice.
  if (!found) found = dlopen("libtorch_cpu.so", RTLD_LAZY | RTLD_LOCAL) != nullptr;
  if (!found) {
    std::fprintf(stderr,
                 "plugtrain: error: LibTorch %s is not installed where plugtrain looks (no libtorch_cpu.so in %s, "
                 "LD_LIBRARY_PATH or the system folders): pip install torch==%s and set PLUGTRAIN_LIBTORCH_DIR to "
                 "its torch/lib folder\n",
                 PLUGTRAIN_TORCH_VERSION, libtorch_dir().c_str(), PLUGTRAIN_TORCH_VERSION);
    return 127;
  }
  if (const char* moved = std::getenv("PLUGTRAIN_LIBTORCH_DIR"); moved && *moved) {
    const char* old = std::getenv("LD_LIBRARY_PATH");
    setenv("LD_LIBRARY_PATH", (std::string(moved) + (old && *old ? ":" + std::string(old) : "")).c_str(), 1);
  }
  const std::string self = self_path();  // <prefix>/bin/plugtrain
  const std::size_t name = self.rfind('/');
  const std::size_t bin = name == std::string::npos || name == 0 ? std::string::npos : self.rfind('/', name - 1);
  if (bin == std::string::npos) {
    std::fprintf(stderr, "plugtrain: error: cannot tell where this launcher is installed (/proc/self/exe: %s)\n",
                 self.empty() ? std::strerror(errno) : self.c_str());
    return 127;
  }
  const std::string prefix = self.substr(0, bin);
  const std::string host = prefix + "/lib/plugtrain/plugtrain";
  execv(host.c_str(), argv);
  std::fprintf(stderr, "plugtrain: error: cannot start %s: %s\n", host.c_str(), std::strerror(errno));
  return 127;
}
