#include "run/send_logs.h"

#include <fstream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "config/experiment_loader.h"
#include "run/run_loggers.h"
#include "util/error.h"
#include "util/folder_lock.h"
#include "version.h"

namespace plugtrain {

namespace {

std::string slurp_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// How the run ended, as its summary.json says: none (a crash) is a failure.
RunEnd recorded_end(const std::filesystem::path& run_folder) {
  std::ifstream in(run_folder / "summary.json");
  if (!in) return RunEnd::failed;
  const nlohmann::json summary = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object()) return RunEnd::failed;
  return summary.value("interrupted", false) || summary.value("paused", false) ? RunEnd::killed : RunEnd::finished;
}

}  // namespace

void send_kept_logs(const std::filesystem::path& run_folder, const std::vector<std::filesystem::path>& plugin_paths,
                    std::ostream& log) {
  const std::filesystem::path record = run_folder / "experiment.toml";
  if (!std::filesystem::is_regular_file(record))
    throw Error(run_folder.string() + ": not a run folder (it has no experiment.toml)", exit_bad_input);
  const ExperimentFile file = parse_experiment_file(record);
  Experiment e = resolve_experiment(file);
  SearchOptions search;
  search.cli_paths = plugin_paths;
  for (const auto& p : e.plugins.paths) search.experiment_paths.emplace_back(p);
  const PluginHost host(search);
  std::vector<NamedLogger> loggers = resolve_loggers(file, e, host);
  if (loggers.empty()) {
    log << run_folder.string() << ": the run had no loggers\n";
    return;
  }
  // Not while the run (or its resume) writes there: the loggers' files are that process's too.
  const FolderLock lock(run_folder, ".run.lock", "plugtrain send-logs");
  LoggerRunFacts facts;  // as the run had them, for a tracker that never got its start
  facts.folder = run_folder;
  facts.experiment = e.experiment.name;
  facts.run_name = e.experiment.name + "/" + run_folder.filename().string();
  facts.params = logged_params(slurp_text(record));
  facts.tags = {{"plugtrain.version", PLUGTRAIN_VERSION},
                {"plugtrain.run_folder", std::filesystem::absolute(run_folder).string()}};
  facts.resending = true;
  PluginLoggers senders(std::move(loggers), std::move(facts), log);
  senders.start(0);
  senders.finish(recorded_end(run_folder), {});
}

}  // namespace plugtrain
