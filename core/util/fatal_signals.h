// A crash is told, not silent: a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) prints
// one line naming the plugin call the crashing thread was in, if any, before the process ends
// as the signal says (exit status 128 + N). Plugin calls mark themselves with PluginCallScope
// (call_plugin does).
#pragma once

#include <string>

namespace plugtrain {

class PluginCallScope {
 public:
  PluginCallScope(const std::string& plugin, const char* what);
  ~PluginCallScope();
  PluginCallScope(const PluginCallScope&) = delete;
  PluginCallScope& operator=(const PluginCallScope&) = delete;

 private:
  const std::string* previous_plugin_;
  const char* previous_what_;
};

// Installs the handlers (once, from main).
void report_fatal_signals();
// Back to the default (a process that dies of the signal, silently): for a child whose
// parent reports how it ended, such as an isolated probe.
void default_fatal_signals();

}  // namespace plugtrain
