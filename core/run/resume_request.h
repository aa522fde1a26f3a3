#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "config/choices.h"

namespace plugtrain {

// --resume: a fresh run (nothing asked), this experiment's newest last.ckpt ("last"), that or
// a fresh start when there is none ("auto": for restarts by torchrun or a scheduler), or a file.
struct ResumeRequest {
  std::optional<ResumeKeyword> keyword;
  std::filesystem::path checkpoint;  // a checkpoint file named instead of a keyword

  // The argument of --resume ("" asks nothing).
  static ResumeRequest parse(const std::string& argument) {
    ResumeRequest r;
    if (argument.empty()) return r;
    r.keyword = choice_named<ResumeKeyword>(argument);
    if (!r.keyword) r.checkpoint = argument;
    return r;
  }
  bool requested() const { return keyword || !checkpoint.empty(); }
  bool automatic() const { return keyword == ResumeKeyword::automatic; }
};

}  // namespace plugtrain
