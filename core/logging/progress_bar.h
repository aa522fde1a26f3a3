// The per-epoch progress bar shown when stdout is a terminal: steps, loss, samples/s, ETA.
// Redrawn in place at most every 100 ms; coloured unless NO_COLOR is set (no-color.org).
// When stdout is not a terminal the trainer prints plain periodic lines instead.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>

namespace plugtrain {

class ProgressBar {
 public:
  // Enabled only for a terminal; `out` is the console (never the log file).
  static bool wanted();
  ProgressBar(std::ostream& out, bool color);
  void start(std::int64_t epoch, std::int64_t epochs, std::int64_t steps);
  // Whether a redraw is due (at most every 100 ms, and at the last step): ask before reading
  // the loss, which would synchronise a GPU.
  bool due(std::int64_t step) const;
  void update(std::int64_t step, double loss, std::int64_t samples);  // loss NaN: none known yet, "-"
  void clear();  // before the epoch's summary line

 private:
  std::ostream& out_;
  bool color_;
  std::int64_t epoch_ = 0, epochs_ = 0, steps_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace plugtrain
