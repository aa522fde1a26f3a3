// A run's loggers (SDK logger.h): which are on and with what options (validate), what they are
// told of the run (facts from the plan and the run folder), and the files they get at the end.
//
// On: the loggers `logging.loggers` lists (default ["tensorboard"]: skipped where no plugin has
// it), each with a [logging.<name>] table, and mlflow where MLFLOW_TRACKING_URI names an http(s)
// server. Each is made by its plugin's factory during validation, so a bad option is one line
// (exit 2) before any work.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "config/experiment_loader.h"
#include "plugins/plugin_host.h"
#include "train/callbacks/plugin_loggers.h"

namespace plugtrain {

// The environment variable through which a sweep hands its trials each logger's parent state
// (a JSON object: logger name -> state).
inline constexpr const char* kLoggerParentsVariable = "PLUGTRAIN_LOGGER_PARENTS";

// Fills e.logging (the loggers on, with their options) and makes each; ConfigError naming the
// key for an unknown logger, an unknown option, or an option its factory refuses.
std::vector<NamedLogger> resolve_loggers(const ExperimentFile& file, Experiment& e, const PluginHost& host);

// The resolved experiment (TOML text), flattened with "/" into "optim/lr" = "0.001", in key order,
// without [logging] (where the run logged to is not a parameter of it, and a URI may hold a
// password).
std::vector<std::pair<std::string, std::string>> logged_params(const std::string& resolved_toml);

// kLoggerParentsVariable's states; empty when it is not set (or not a JSON object).
std::map<std::string, std::string> logger_parents_from_environment();

// The run's files the loggers get at its end: summary.json, metrics.csv, experiment.toml,
// classes.json, confusion.csv where there is one, and model.safetensors (exported here from the
// best checkpoint of `checkpoints`, else the last) where the run kept one.
// A weights export that fails is said on `log`; the other files go.
std::vector<RunArtifact> run_artifacts(const std::filesystem::path& run_folder,
                                       const std::filesystem::path& checkpoints, std::ostream& log);

}  // namespace plugtrain
