// An option value written as a TOML value: 3, 0.5, true, "relu", [256, 128].
#pragma once

#include <string>

#include "plugtrain/options.h"

namespace plugtrain {

std::string toml_text(const OptionValue& value);

}  // namespace plugtrain
