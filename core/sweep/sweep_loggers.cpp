#include "sweep/sweep_loggers.h"

#include <nlohmann/json.hpp>

#include "run/run_loggers.h"
#include "version.h"

namespace plugtrain {

namespace {

// The sweep's axes as params: "sweep/optim.lr" = "[0.1, 0.01]" (or its distribution).
std::vector<std::pair<std::string, std::string>> sweep_params(const SweepSetup& setup) {
  std::vector<std::pair<std::string, std::string>> params = {{"sweep/method", word_of(setup.spec.method)},
                                                             {"sweep/trials", std::to_string(setup.trials.size())}};
  for (const SweepSpec::Axis& axis : setup.spec.axes) {
    std::string values;
    for (const std::string& v : axis.values) values += (values.empty() ? "" : ", ") + v;
    if (axis.distribution)
      values = std::string(word_of(*axis.distribution)) + "(" + std::to_string(axis.low) + ", " +
               std::to_string(axis.high) + ")";
    else
      values = "[" + values + "]";
    params.emplace_back("sweep/" + axis.key, values);
  }
  return params;
}

}  // namespace

SweepLoggers::SweepLoggers(const SweepSetup& setup, std::ostream& log) : folder_(setup.folder) {
  if (setup.loggers.empty()) return;
  LoggerRunFacts facts;
  facts.folder = setup.folder;
  facts.experiment = setup.base.experiment.name;
  facts.run_name = setup.base.experiment.name + "/sweep";
  facts.params = sweep_params(setup);
  facts.tags = {{"plugtrain.version", PLUGTRAIN_VERSION},
                {"plugtrain.sweep", std::filesystem::absolute(setup.folder).string()},
                {"plugtrain.trials", std::to_string(setup.trials.size())}};
  loggers_ = std::make_shared<PluginLoggers>(setup.loggers, std::move(facts), log);
  loggers_->start(0);
  nlohmann::json parents = nlohmann::json::object();
  for (const auto& [name, state] : loggers_->states()) parents[name] = state;
  if (!parents.empty()) environment_.emplace_back(kLoggerParentsVariable, parents.dump());
}

void SweepLoggers::finish(RunEnd end) {
  if (!loggers_) return;
  std::vector<RunArtifact> report;
  for (const char* name : {"sweep.md", "sweep.csv", "sweep.svg"})
    if (std::filesystem::is_regular_file(folder_ / name)) report.push_back({folder_ / name, name});
  loggers_->finish(end, report);
}

}  // namespace plugtrain
