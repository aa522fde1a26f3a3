// What `check-backend` prints: a table of every check, the operators that fell back to the CPU,
// and a closing line; or the same as one JSON document.
#include <algorithm>
#include <cstdio>

#include "diagnose/conformance.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain {

namespace {

int count(const ConformanceReport& r, CheckStatus status) {
  return int(std::count_if(r.checks.begin(), r.checks.end(), [&](const CheckResult& c) { return c.status == status; }));
}

std::string fallbacks_text(const std::map<std::string, std::uint64_t>& fallbacks) {
  std::vector<std::string> items;
  for (const auto& [op, n] : fallbacks) items.push_back(op + " x" + std::to_string(n));
  return join(items, ", ", "none");
}

}  // namespace

void print_conformance(const ConformanceReport& report, std::ostream& out) {
  out << "check-backend " << report.backend << ": device " << report.device << " (" << report.device_name
      << "), compared with the CPU\n\n";
  std::size_t group_width = 5, name_width = 5;
  for (const CheckResult& c : report.checks) {
    group_width = std::max(group_width, c.group.size());
    name_width = std::max(name_width, c.name.size());
  }
  auto row = [&](const std::string& group, const std::string& name, const std::string& result,
                 const std::string& seconds, const std::string& detail) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-*s  %-*s  %-6s %7s  ", int(group_width), group.c_str(), int(name_width),
                  name.c_str(), result.c_str(), seconds.c_str());
    out << line << detail << "\n";
  };
  row("group", "check", "result", "time", "detail");
  for (const CheckResult& c : report.checks)
    row(c.group, c.name, to_string(c.status), fixed(c.seconds, 2) + " s", c.detail);
  out << "\noperators that fell back to the CPU during the checks: " << fallbacks_text(report.cpu_fallbacks) << "\n";
  out << "check-backend " << report.backend << ": " << (report.ok() ? "passed" : "FAILED") << ": "
      << count(report, CheckStatus::pass) << " passed, " << count(report, CheckStatus::fail) << " failed, "
      << count(report, CheckStatus::skip) << " skipped in " << fixed(report.seconds, 1) << " s\n";
}

nlohmann::json conformance_json(const ConformanceReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& c : report.checks)
    checks.push_back({{"group", c.group},
                      {"name", c.name},
                      {"result", to_string(c.status)},
                      {"detail", c.detail},
                      {"seconds", c.seconds}});
  nlohmann::json fallbacks = nlohmann::json::object();
  for (const auto& [op, n] : report.cpu_fallbacks) fallbacks[op] = n;
  return {{"backend", report.backend},
          {"device", report.device},
          {"device_name", report.device_name},
          {"ok", report.ok()},
          {"passed", count(report, CheckStatus::pass)},
          {"failed", count(report, CheckStatus::fail)},
          {"skipped", count(report, CheckStatus::skip)},
          {"seconds", report.seconds},
          {"checks", checks},
          {"cpu_fallbacks", fallbacks}};
}

}  // namespace plugtrain
