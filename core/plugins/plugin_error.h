// Errors raised by or about a plugin, and the guard that turns anything a plugin throws
// into such an error. Every call from the host into plugin code goes through call_plugin.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "util/error.h"
#include "util/fatal_signals.h"

namespace plugtrain {

class PluginError : public Error {
 public:
  PluginError(std::string plugin, const std::string& message)
      : Error("plugin '" + plugin + "': " + message), plugin_(std::move(plugin)) {}
  const std::string& plugin() const { return plugin_; }

 private:
  std::string plugin_;
};

// Runs fn(); an exception escaping the plugin becomes a PluginError naming the plugin and
// the call. (A crash inside a plugin cannot be caught, only reported; an exception always can.)
template <class Fn>
auto call_plugin(const std::string& plugin, const char* what, Fn&& fn) -> decltype(fn()) {
  const PluginCallScope scope(plugin, what);  // a crash inside is reported naming the call
  try {
    return fn();
  } catch (const PluginError&) {
    throw;
  } catch (const std::exception& e) {
    throw PluginError(plugin, std::string(what) + " threw: " + e.what());
  } catch (...) {
    throw PluginError(plugin, std::string(what) + " threw a non-standard exception");
  }
}

}  // namespace plugtrain
