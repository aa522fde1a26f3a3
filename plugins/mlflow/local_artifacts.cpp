// The run's files into a folder on this machine (local_artifacts.h).
#include "local_artifacts.h"

#include <algorithm>
#include <system_error>

#include "mlflow_format.h"

namespace plugtrain::mlflow {

namespace {

namespace fs = std::filesystem;

// `name` as a relative path whose every segment is a real one; empty when nothing is left.
fs::path inside_path(const std::string& name) {
  fs::path relative;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t end = std::min(name.find('/', start), name.size());
    const std::string segment = name.substr(start, end - start);
    if (!segment.empty() && segment != "." && segment != "..") relative /= segment;
    start = end + 1;
  }
  return relative;
}

}  // namespace

std::optional<fs::path> local_artifact_folder(const std::string& artifact_uri) {
  static const std::string scheme = "file:";
  if (!artifact_uri.empty() && artifact_uri.front() == '/') return fs::path(artifact_uri);
  if (artifact_uri.compare(0, scheme.size(), scheme) != 0) return std::nullopt;
  std::string rest = artifact_uri.substr(scheme.size());
  if (rest.compare(0, 2, "//") == 0) {  // "file://host/path": this machine's only
    const std::size_t slash = rest.find('/', 2);
    const std::string host = rest.substr(2, slash == std::string::npos ? std::string::npos : slash - 2);
    if (!host.empty() && host != "localhost") return std::nullopt;
    rest = slash == std::string::npos ? "" : rest.substr(slash);
  }
  if (rest.empty() || rest.front() != '/') return std::nullopt;
  return fs::path(percent_decode(rest));
}

std::string write_local_artifact(const fs::path& folder, const std::string& name, const std::string& path) {
  const fs::path relative = inside_path(name);
  if (relative.empty()) return "\"" + name + "\" names no file inside the run";
  const fs::path target = folder / relative;
  std::error_code error;
  fs::create_directories(target.parent_path(), error);
  if (error) return "cannot make " + target.parent_path().string() + " (" + error.message() + ")";
  const fs::path temporary = target.string() + ".plugtrain-tmp";
  fs::copy_file(path, temporary, fs::copy_options::overwrite_existing, error);
  if (!error) fs::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    return "cannot write " + target.string() + " (" + error.message() + ")";
  }
  return "";
}

}  // namespace plugtrain::mlflow
