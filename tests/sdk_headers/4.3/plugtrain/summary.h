// plugtrain SDK 4.3 (TEST ONLY) — the extension "plugtrain.summary", version 1, that a 4.3 host
// asks of a model (Model::extension): one line about the model. Absent: the host prints none.
#pragma once

#include <string>

namespace plugtrain {

inline constexpr const char* kSummaryExtension = "plugtrain.summary";

class SummaryExtension {
 public:
  virtual ~SummaryExtension() = default;
  virtual std::string summary() const = 0;
};

}  // namespace plugtrain
