#include "util/fatal_signals.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cstdlib>

namespace plugtrain {

namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

thread_local const std::string* t_plugin = nullptr;
thread_local const char* t_what = nullptr;

// Only async-signal-safe calls from here on: write(2) of fixed text.
void say(const char* text) {
  if (text) (void)!::write(2, text, ::strlen(text));
}

void on_fatal_signal(int sig) {
  char number[8];
  int n = sig, i = sizeof number - 1;
  number[i] = '\0';
  do number[--i] = char('0' + n % 10); while ((n /= 10) > 0 && i > 0);
  say("\nplugtrain: fatal: signal ");
  say(number + i);
  say(" (SIG");
  say(sigabbrev_np(sig));
  if (t_plugin) {
    say(") inside plugin '");
    say(t_plugin->c_str());
    say("' (");
    say(t_what);
    say("); that plugin is broken: remove it from the plugin path or run without it\n");
  } else {
    say(") in plugtrain or LibTorch, not in a plugin call\n");
  }
  ::signal(sig, SIG_DFL);  // end as the signal says
  ::raise(sig);
}

}  // namespace

PluginCallScope::PluginCallScope(const std::string& plugin, const char* what)
    : previous_plugin_(t_plugin), previous_what_(t_what) {
  t_plugin = &plugin;
  t_what = what;
}

PluginCallScope::~PluginCallScope() {
  t_plugin = previous_plugin_;
  t_what = previous_what_;
}

void report_fatal_signals() {
  // Its own stack, so a stack overflow can still be reported.
  static char alternate_stack[64 * 1024];
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof alternate_stack;
  ::sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int sig : kFatalSignals) ::sigaction(sig, &action, nullptr);
}

void default_fatal_signals() {
  for (int sig : kFatalSignals) ::signal(sig, SIG_DFL);
}

}  // namespace plugtrain
