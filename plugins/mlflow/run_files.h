// What the MLflow plugin keeps in <run folder>/mlflow/ besides the journal: state.json (which
// server and run), sent (how much of the journal the server acknowledged) and artifacts.json
// (the files not uploaded yet). Each is rewritten whole and atomically (a temporary file
// renamed over it), so a killed process leaves the old version or the new, never half of one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace plugtrain::mlflow {

// state.json. Besides the run's identity it keeps what a later process (a resume, or
// `plugtrain send-logs`) needs to finish the job: the run's name and start time in case it was
// never created, whether its params went, and how it ended.
struct KeptState {
  std::string uri;
  std::string experiment_id;
  std::string run_id;
  std::string run_uuid;  // our tag plugtrain.run_uuid: finds a run whose creation's answer was lost
  std::string artifact_uri;
  std::string experiment;  // the experiment's and the run's name
  std::string run_name;
  std::int64_t start_time = 0;
  bool params_sent = false;
  bool artifacts_unserved = false;  // the run's files can go nowhere (said once): dropped
  std::string end;                  // "" (still running, or killed), FINISHED, FAILED or KILLED
  std::int64_t end_time = 0;        // ms; 0 while there is no end
};

// The state() a checkpoint keeps: {"uri","experiment_id","run_id","run_uuid"}.
std::string identity_json(const KeptState& state);
// A state() read back (restored_state, parent_state); nullopt when it is not one.
std::optional<KeptState> identity_from_json(const std::string& text);

struct PendingArtifact {
  std::string path;  // on this machine
  std::string name;  // relative to the run folder, as the run's artifacts
};

class RunFiles {
 public:
  explicit RunFiles(std::filesystem::path folder) : folder_(std::move(folder)) {}

  const std::filesystem::path& folder() const { return folder_; }
  std::filesystem::path journal() const { return folder_ / "journal.jsonl"; }

  // nullopt when there is no readable state.json.
  std::optional<KeptState> read_state() const;
  void write_state(const KeptState& state) const;
  // The journal's acknowledged bytes; 0 without a file.
  std::uint64_t read_sent() const;
  void write_sent(std::uint64_t offset) const;
  std::vector<PendingArtifact> read_artifacts() const;
  void write_artifacts(const std::vector<PendingArtifact>& artifacts) const;

 private:
  std::filesystem::path folder_;
};

// `text` into `path` through `path`.tmp and a rename. Throws std::runtime_error when it cannot.
void write_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace plugtrain::mlflow
