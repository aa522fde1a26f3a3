// How often this process entered the stages a run goes through once each (validation, the
// plugin host, reading the data set, building a trainer): a run's summary.json reports the
// counts of its own span, so a test sees that choosing the fastest backend or searching the
// batch size did not validate, load plugins or read the data again.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace plugtrain {

enum class Stage { validation, plugin_host, data_load, trainer_build };

// Thread-safe; a stage entered counts once, whether it then succeeds or not.
void count_stage(Stage stage);

// Every stage's count since the process began, by name ("validations", "plugin_hosts",
// "data_loads", "trainer_builds").
std::map<std::string, std::int64_t> stage_counts();

// What `later` counted beyond `earlier` (two stage_counts()).
std::map<std::string, std::int64_t> stage_counts_between(const std::map<std::string, std::int64_t>& earlier,
                                                         const std::map<std::string, std::int64_t>& later);

}  // namespace plugtrain
