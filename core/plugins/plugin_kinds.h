// The kinds of plugin, as one table: adding a kind is one row here (and its builder in
// staging_registrar.h). A plugin's handshake names its kinds as bits (abi.h).
#pragma once

#include <cstdint>
#include <string>

#include "plugtrain/abi.h"

namespace plugtrain {

struct PluginKind {
  std::uint32_t bit;
  const char* name;  // in `plugtrain plugins` and its --json: "backend", "models", ...
  const char* one;   // one registration of it, for messages: "a backend", "a model", ...
};

inline constexpr PluginKind kPluginKinds[] = {
    {PLUGTRAIN_KIND_BACKEND, "backend", "a backend"},    {PLUGTRAIN_KIND_MODELS, "models", "a model"},
    {PLUGTRAIN_KIND_DATASETS, "datasets", "a data set"}, {PLUGTRAIN_KIND_TASKS, "tasks", "a task"},
    {PLUGTRAIN_KIND_LOGGERS, "loggers", "a logger"},
};

// "models,datasets" for the bits of two kinds; "" when no bit is a known kind.
std::string kind_names(std::uint32_t kinds, const char* separator = ",");
// The bits no row knows.
std::uint32_t unknown_kinds(std::uint32_t kinds);

}  // namespace plugtrain
