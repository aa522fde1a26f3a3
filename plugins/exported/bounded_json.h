// JSON from an archive, bounded before it is built: a first pass over the text (nlohmann's SAX
// interface, which allocates nothing per value) checks the nesting depth and how many entries
// chosen lists may hold, so that a small file can neither nest deep enough to exhaust a stack
// nor list a million nodes to exhaust memory. Only then is the document built.
//
// nlohmann's parser callback cannot do this: it is given the depth, but discarding a value makes
// it search its parent for it, quadratic in a long list (a 4 MB list of a million `{}` took
// minutes).
#pragma once

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace plugtrain::exported {

// What exceeds a bound, without the file's name (the caller names it).
class JsonBoundsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct JsonBounds {
  int max_depth = 256;
  // The most entries of the list or object at a path of keys from the root ("graph_module/graph/nodes").
  std::map<std::string, std::size_t> max_entries;
};

// Throws JsonBoundsError for a bound exceeded and nlohmann::json::parse_error for text that is
// not JSON. Entries are counted as they start, so the pass stops at the first one too many.
nlohmann::json parse_bounded(const std::string& text, const JsonBounds& bounds);

}  // namespace plugtrain::exported
