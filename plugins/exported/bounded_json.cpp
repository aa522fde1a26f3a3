#include "bounded_json.h"

#include <vector>

namespace plugtrain::exported {

namespace {

// The SAX pass: a stack of the open lists and objects, each with its path, entries and bound.
class BoundsCheck final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit BoundsCheck(const JsonBounds& bounds) : bounds_(bounds) {}

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& name) override {
    key_ = name;
    return true;
  }
  // Not JSON: parse() below says where, in nlohmann's words.
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Open {
    std::string path;                   // only while it leads to a bounded path: no copies of long keys
    bool on_a_bound = false;            // the path is a bounded one or leads to one
    std::size_t entries = 0, most = 0;  // most 0: unbounded
  };
  const JsonBounds& bounds_;
  std::vector<Open> open_;
  std::string key_;

  // A value starts: one more entry of the list or object it is in.
  bool value() {
    if (open_.empty()) return true;
    Open& parent = open_.back();
    if (parent.most && ++parent.entries > parent.most)
      throw JsonBoundsError(parent.path + " has more than " + std::to_string(parent.most) + " entries (the limit)");
    return true;
  }
  bool open() {
    value();
    if (int(open_.size()) >= bounds_.max_depth)
      throw JsonBoundsError("it nests deeper than " + std::to_string(bounds_.max_depth) + " levels (the limit)");
    // An object's entry is named by its key; a list's entries all by "[]".
    const bool in_object = !open_.empty() && !key_.empty();
    Open o;
    if (open_.empty()) {
      o.on_a_bound = true;
    } else if (open_.back().on_a_bound) {
      const std::string& parent = open_.back().path;
      std::string path = parent.empty() ? key_ : parent + "/" + (in_object ? key_ : "[]");
      if (leads_to_a_bound(path)) o.path = std::move(path), o.on_a_bound = true;
    }
    const auto bound = o.on_a_bound ? bounds_.max_entries.find(o.path) : bounds_.max_entries.end();
    if (bound != bounds_.max_entries.end()) o.most = bound->second;
    open_.push_back(std::move(o));
    key_.clear();
    return true;
  }
  bool leads_to_a_bound(const std::string& path) const {
    for (const auto& [bounded, most] : bounds_.max_entries)
      if (bounded.compare(0, path.size(), path) == 0 && (bounded.size() == path.size() || bounded[path.size()] == '/'))
        return true;
    return false;
  }
  bool close() {
    open_.pop_back();
    key_.clear();
    return true;
  }
};

}  // namespace

nlohmann::json parse_bounded(const std::string& text, const JsonBounds& bounds) {
  BoundsCheck check(bounds);
  nlohmann::json::sax_parse(text, &check);
  return nlohmann::json::parse(text);  // throws parse_error where the first pass stopped
}

}  // namespace plugtrain::exported
