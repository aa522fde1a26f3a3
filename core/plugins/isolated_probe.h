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

}  // namespace plugtrain
