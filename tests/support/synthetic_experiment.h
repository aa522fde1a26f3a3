// The small classification run that end-to-end tests build on (ExperimentToml::synthetic), as
// text, for tests that append tables of their own to it.
#pragma once

#include <string>

#include "support/experiment_toml.h"

namespace plugtrain::testing {

inline std::string synthetic_experiment(const std::string& name) { return ExperimentToml::synthetic(name).text(); }

}  // namespace plugtrain::testing
