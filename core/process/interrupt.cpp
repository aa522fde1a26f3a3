#include "process/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace plugtrain {

namespace {

std::atomic<int> g_signal{0};
struct sigaction g_previous_int, g_previous_term, g_previous_hup;

void on_signal(int sig) {
  if (g_signal.load() != 0 && sig == SIGINT) {
    static const char msg[] = "\nplugtrain: second interrupt: exiting now without a checkpoint\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(130);
  }
  g_signal.store(sig);
}

}  // namespace

InterruptScope::InterruptScope() {
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &g_previous_int);
  ::sigaction(SIGTERM, &action, &g_previous_term);
  ::sigaction(SIGHUP, &action, &g_previous_hup);  // the terminal closed: stop as for SIGTERM
}

InterruptScope::~InterruptScope() {
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  ::sigaction(SIGHUP, &g_previous_hup, nullptr);
  g_signal.store(0);  // the scope's interrupt has been dealt with
}

bool interrupt_requested() { return g_signal.load() != 0; }

const char* interrupt_signal_name() {
  switch (g_signal.load()) {
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "SIGINT";
  }
}

}  // namespace plugtrain
