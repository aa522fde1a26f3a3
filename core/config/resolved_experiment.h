// The experiment as a run used it, every key with its value (defaults included), as TOML: the
// run folder's experiment.toml and the record each checkpoint stores; and the check that a
// resumed run is the same run as the one that wrote its checkpoint.
#pragma once

#include <filesystem>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "config/experiment.h"
#include "util/result.h"

namespace plugtrain {

// `decided`: keys whose value the run decided rather than the user (key path -> TOML text),
// e.g. data.global_batch_size.
std::string resolved_toml(const Experiment& e, const std::map<std::string, std::string>& decided = {});

// An integer key of a resolved record (e.g. the data.batch_size an "auto" run chose); nullopt
// when the record has no such integer.
std::optional<std::int64_t> recorded_integer(const std::string& record, const std::string& key_path);

// Refused, listing every key that differs between `saved` (the checkpoint's record) and
// `current`, except those the schema lets change on resume.
Status resume_compatible(const std::string& saved, const std::string& current);

}  // namespace plugtrain
