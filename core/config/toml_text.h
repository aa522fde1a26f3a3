// An option value written as a TOML value: 3, 0.5, true, "relu", [256, 128].
#pragma once

#include <string>

#include <toml++/toml.h>

#include "plugtrain/options.h"

namespace plugtrain {

std::string toml_text(const OptionValue& value);

// A TOML node written back as TOML, the same way wherever plugtrain shows or compares one:
// strings in double quotes, floats short ("0.05", not toml++'s 0.050000000000000003).
std::string toml_text(const toml::node& node);

// "text" as a TOML basic string, escaped.
std::string toml_quoted(const std::string& text);

}  // namespace plugtrain
