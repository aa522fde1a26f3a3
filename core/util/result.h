// "Could not, and why": the one result type inside the core for an attempt that may be refused
// for a reason a person should read (a probe, a recording, a check). The caller decides what a
// refusal means: a line in the log, a fallback, or an Error the user sees (util/error.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace plugtrain {

struct WhyNot {
  std::string reason;  // one line, no trailing full stop
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: a value converts, as with std::optional
  Result(WhyNot refusal) : state_(std::move(refusal)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const std::string& why_not() const { return std::get<WhyNot>(state_).reason; }

 private:
  std::variant<T, WhyNot> state_;
};

// A Result with no value: done, or refused and why.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(WhyNot refusal) : refusal_(std::move(refusal.reason)) {}  // NOLINT
  static Status fine() { return {}; }

  bool ok() const { return !refusal_; }
  explicit operator bool() const { return ok(); }
  const std::string& why_not() const { return *refusal_; }

 private:
  std::optional<std::string> refusal_;
};

}  // namespace plugtrain
