// The MLflow plugin's kept files (run_files.h).
#include "run_files.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "mlflow_format.h"

namespace plugtrain::mlflow {

namespace {

using nlohmann::json;

std::optional<json> read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  json parsed = json::parse(text.str(), nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

std::string string_field(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t integer_field(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

bool bool_field(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

std::string identity_json(const KeptState& state) {
  if (state.uri.empty()) return "";
  return json_text({{"uri", state.uri},
                    {"experiment_id", state.experiment_id},
                    {"run_id", state.run_id},
                    {"run_uuid", state.run_uuid}});
}

std::optional<KeptState> identity_from_json(const std::string& text) {
  const json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_object()) return std::nullopt;
  KeptState state;
  state.uri = string_field(parsed, "uri");
  state.experiment_id = string_field(parsed, "experiment_id");
  state.run_id = string_field(parsed, "run_id");
  state.run_uuid = string_field(parsed, "run_uuid");
  if (state.run_id.empty() && state.run_uuid.empty()) return std::nullopt;
  return state;
}

std::optional<KeptState> RunFiles::read_state() const {
  const std::optional<json> parsed = read_json_file(folder_ / "state.json");
  if (!parsed || !parsed->is_object()) return std::nullopt;
  const json& j = *parsed;
  KeptState state;
  state.uri = string_field(j, "uri");
  state.experiment_id = string_field(j, "experiment_id");
  state.run_id = string_field(j, "run_id");
  state.run_uuid = string_field(j, "run_uuid");
  state.artifact_uri = string_field(j, "artifact_uri");
  state.experiment = string_field(j, "experiment");
  state.run_name = string_field(j, "run_name");
  state.start_time = integer_field(j, "start_time");
  state.params_sent = bool_field(j, "params_sent");
  state.artifacts_unserved = bool_field(j, "artifacts_unserved");
  state.end = string_field(j, "end");
  state.end_time = integer_field(j, "end_time");
  return state;
}

void RunFiles::write_state(const KeptState& state) const {
  const json j = {{"uri", state.uri},
                  {"experiment_id", state.experiment_id},
                  {"run_id", state.run_id},
                  {"run_uuid", state.run_uuid},
                  {"end", state.end.empty() ? json(nullptr) : json(state.end)},
                  {"end_time", state.end_time == 0 ? json(nullptr) : json(state.end_time)},
                  {"artifact_uri", state.artifact_uri},
                  {"experiment", state.experiment},
                  {"run_name", state.run_name},
                  {"start_time", state.start_time},
                  {"params_sent", state.params_sent},
                  {"artifacts_unserved", state.artifacts_unserved}};
  write_atomically(folder_ / "state.json", json_text(j) + "\n");
}

std::uint64_t RunFiles::read_sent() const {
  std::ifstream in(folder_ / "sent");
  std::uint64_t offset = 0;
  return in >> offset ? offset : 0;
}

void RunFiles::write_sent(std::uint64_t offset) const {
  write_atomically(folder_ / "sent", std::to_string(offset) + "\n");
}

std::vector<PendingArtifact> RunFiles::read_artifacts() const {
  std::vector<PendingArtifact> artifacts;
  const std::optional<json> parsed = read_json_file(folder_ / "artifacts.json");
  if (!parsed || !parsed->is_array()) return artifacts;
  for (const json& entry : *parsed) {
    if (entry.is_object()) artifacts.push_back({string_field(entry, "path"), string_field(entry, "name")});
  }
  return artifacts;
}

void RunFiles::write_artifacts(const std::vector<PendingArtifact>& artifacts) const {
  json list = json::array();
  for (const PendingArtifact& a : artifacts) list.push_back({{"path", a.path}, {"name", a.name}});
  write_atomically(folder_ / "artifacts.json", json_text(list) + "\n");
}

void write_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot write " + temporary.string());
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !written) throw std::runtime_error("cannot write " + temporary.string());
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw std::runtime_error("cannot write " + path.string() + ": " + error.message());
}

}  // namespace plugtrain::mlflow
