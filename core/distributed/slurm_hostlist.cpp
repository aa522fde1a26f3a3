#include "distributed/slurm_hostlist.h"

#include <cctype>
#include <optional>
#include <vector>

namespace plugtrain {

namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// a <= b for two runs of digits of any length (zero padding is not part of the value).
bool not_above(const std::string& a, const std::string& b) {
  auto value = [](const std::string& s) {
    const auto nonzero = s.find_first_not_of('0');
    return nonzero == std::string::npos ? std::string() : s.substr(nonzero);
  };
  const std::string va = value(a), vb = value(b);
  return va.size() != vb.size() ? va.size() < vb.size() : va <= vb;
}

std::vector<std::string> split(const std::string& s, char separator) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const auto end = s.find(separator, start);
    parts.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// The inside of one bracket, "01-04,07": its first number as written ("01"), once every part
// has been checked to be a number or an ascending range of numbers.
Result<std::string> first_of_ranges(const std::string& inside) {
  const std::vector<std::string> parts = split(inside, ',');
  for (const std::string& part : parts) {
    const auto dash = part.find('-');
    const std::string low = part.substr(0, dash);
    const std::string high = dash == std::string::npos ? low : part.substr(dash + 1);
    if (!all_digits(low) || !all_digits(high))
      return WhyNot{"[" + inside + "] holds '" + part + "', not a number or a range like 01-04"};
    if (!not_above(low, high)) return WhyNot{"[" + inside + "] holds the range " + part + ", which runs backwards"};
  }
  return parts.front().substr(0, parts.front().find('-'));
}

// A non-negative count of digits only, at most 2^20 (more tasks than that is no real list).
std::optional<int> count(const std::string& s) {
  if (!all_digits(s) || s.size() > 7) return std::nullopt;
  const long v = std::stol(s);
  return v <= (1 << 20) ? std::optional<int>(int(v)) : std::nullopt;
}

}  // namespace

Result<std::string> first_slurm_host(const std::string& hostlist) {
  if (hostlist.empty()) return WhyNot{"it is empty"};
  std::optional<std::string> first;
  std::string name;  // the current name with each bracket replaced by its first number
  for (std::string::size_type i = 0; i <= hostlist.size(); ++i) {
    if (i == hostlist.size() || hostlist[i] == ',') {
      if (name.empty()) return WhyNot{"it has an empty host name"};
      if (!first) first = name;
      name.clear();
      continue;
    }
    const char c = hostlist[i];
    if (c == '[') {
      const auto close = hostlist.find(']', i);
      const auto next_open = hostlist.find('[', i + 1);
      if (close == std::string::npos || next_open < close) return WhyNot{"a '[' is not closed"};
      Result<std::string> low = first_of_ranges(hostlist.substr(i + 1, close - i - 1));
      if (!low) return WhyNot{low.why_not()};
      name += low.value();
      i = close;  // the ranges' commas are not name separators
    } else if (c == ']') {
      return WhyNot{"a ']' closes no '['"};
    } else if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c))) {
      return WhyNot{"it holds a space or control character"};
    } else {
      name += c;
    }
  }
  return *first;
}

Result<int> slurm_tasks_on_node(const std::string& tasks_per_node, int node) {
  if (node < 0) return WhyNot{"node " + std::to_string(node) + " is not a node index"};
  long nodes_before = 0;  // nodes covered by the entries already read
  std::optional<int> found;
  for (const std::string& entry : split(tasks_per_node, ',')) {
    // "C" is one node with C tasks; "C(xR)" is R nodes with C tasks each.
    const auto open = entry.find("(x");
    const std::optional<int> tasks = count(entry.substr(0, open));
    std::optional<int> repeat = 1;
    if (open != std::string::npos)
      repeat = entry.back() == ')' ? count(entry.substr(open + 2, entry.size() - open - 3)) : std::nullopt;
    if (!tasks || *tasks < 1 || !repeat || *repeat < 1)
      return WhyNot{"'" + entry + "' is not a task count like 2 or 2(x3)"};
    if (!found && node < nodes_before + *repeat) found = *tasks;
    nodes_before += *repeat;
  }
  if (!found)
    return WhyNot{"node " + std::to_string(node) + " is past its last node, " + std::to_string(nodes_before - 1)};
  return *found;
}

}  // namespace plugtrain
