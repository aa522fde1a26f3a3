// The one switch behind the test plugins' faults: PLUGTRAIN_TEST_FAULT="<entry>:<kind>" makes the
// plugin entry point named <entry> throw (kind "throw"), crash with SIGSEGV ("crash") or never
// return ("hang"), as a broken vendor library can. tests/support/faults.h builds the commands.
#pragma once

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace plugtrain_test {

inline void fault_point(const char* entry) {
  const char* spec = std::getenv("PLUGTRAIN_TEST_FAULT");
  if (!spec) return;
  const std::string s(spec);
  const std::size_t colon = s.find(':');
  if (s.substr(0, colon) != entry) return;
  const std::string kind = colon == std::string::npos ? "throw" : s.substr(colon + 1);
  if (kind == "crash") std::raise(SIGSEGV);
  if (kind == "hang")
    for (;;) ::pause();
  throw std::runtime_error(std::string("injected fault in ") + entry);
}

}  // namespace plugtrain_test
