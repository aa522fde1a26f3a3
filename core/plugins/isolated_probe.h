// A backend's probe run in a child process (fork), so that a probe that crashes or hangs costs
// that backend, not the command: the child sends the ProbeResult back as JSON through a pipe,
// and a child that dies by a signal, exits without an answer or outlives the time limit gives a
// ProbeCode::error naming what happened. On macOS, where a forked child may not use Metal or
// the Objective-C runtime, the probe runs in this process.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "plugtrain/backend.h"

namespace plugtrain {

// PLUGTRAIN_PROBE_TIMEOUT (seconds) overrides the default limit of 30 s.
std::chrono::milliseconds probe_time_limit();

// `probe` must not throw (BackendHandle turns exceptions into ProbeResults first).
// `plugin` names it in the ProbeResult's message when the child fails.
ProbeResult probe_in_child(const std::string& plugin, const std::function<ProbeResult()>& probe,
                           std::chrono::milliseconds limit);

// probe_in_child, except for a plugin file (`file`, empty: none) whose device runtime this
// process has started (note_runtime_started): that one is probed here. A forked copy of a
// process whose runtime is started cannot start it again (CUDA's cuInit answers "initialization
// error" there), so every later probe (a second PluginHost: bench rows, `fastest`) would call a
// working GPU unusable; and the runtime already runs here, which a probe crash would have shown.
ProbeResult probe_isolated(const std::string& plugin, const std::string& file,
                           const std::function<ProbeResult()>& probe, std::chrono::milliseconds limit);

// For the life of this process: `file`'s backend has done device work here (or is about to).
void note_runtime_started(const std::string& file);

}  // namespace plugtrain
