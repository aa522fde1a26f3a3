// The run's files where its artifact URI is a folder on this machine, not the tracking server's
// store: a server started with --no-serve-artifacts and --default-artifact-root /shared/mlruns,
// or an experiment made with such an artifact_location. MLflow's own client writes there itself
// (LocalArtifactRepository: the file at <folder>/<name>), and so does this plugin, so the server's
// UI and MLflow's clients read the files from the same folder.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace plugtrain::mlflow {

// The folder `artifact_uri` names on this machine: "file:///x/y", "file://localhost/x/y" (both
// percent-decoded) or an absolute path "/x/y". nullopt for another scheme (s3://, gs://, ...)
// or another host.
std::optional<std::filesystem::path> local_artifact_folder(const std::string& artifact_uri);

// `path` written as `folder`/`name` (`name`'s empty, "." and ".." segments left out, so the file
// stays inside the run's folder), through a temporary file and a rename. "" when it was
// written, else one line saying why.
std::string write_local_artifact(const std::filesystem::path& folder, const std::string& name, const std::string& path);

}  // namespace plugtrain::mlflow
