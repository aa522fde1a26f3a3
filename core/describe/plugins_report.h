// `plugtrain plugins`: the search order and every plugin found, as a table or as JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "plugins/plugin_host.h"

namespace plugtrain {

std::string plugins_table(PluginHost& host);
nlohmann::json plugins_json(PluginHost& host);

}  // namespace plugtrain
