// SIGINT / SIGTERM / SIGHUP (the terminal closed) during training: the first asks the trainer to stop after the current
// step (it then writes a checkpoint and says how to resume); a second SIGINT exits at once.
#pragma once

namespace plugtrain {

class InterruptScope {
 public:
  InterruptScope();   // installs the handlers
  ~InterruptScope();  // restores the previous ones
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

bool interrupt_requested();
const char* interrupt_signal_name();

}  // namespace plugtrain
