// Where the tests read real Fashion-MNIST: $FASHION_MNIST when it is set (a machine where the
// Debian package's files were unpacked elsewhere, as the GPU checker does), else the folder
// Debian's dataset-fashion-mnist installs, which is also plugtrain's default data.path.
// Header-only.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace plugtrain::testing {

inline std::filesystem::path fashion_mnist_dir() {
  const char* env = std::getenv("FASHION_MNIST");
  return env && *env ? std::filesystem::path(env) : std::filesystem::path("/usr/share/datasets/fashion-mnist");
}

// The TOML line for an experiment's [data] table.
inline std::string fashion_mnist_path_line() { return "path = \"" + fashion_mnist_dir().string() + "\"\n"; }

// The command-line override for a shipped example or an experiment that leaves data.path out.
inline std::string fashion_mnist_path_set() { return " --set 'data.path=\"" + fashion_mnist_dir().string() + "\"' "; }

}  // namespace plugtrain::testing
