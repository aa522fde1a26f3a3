#include "logging/progress_bar.h"

#include <cmath>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>

namespace plugtrain {

bool ProgressBar::wanted() { return ::isatty(STDOUT_FILENO) == 1; }

ProgressBar::ProgressBar(std::ostream& out, bool color) : out_(out), color_(color && !std::getenv("NO_COLOR")) {}

void ProgressBar::start(std::int64_t epoch, std::int64_t epochs, std::int64_t steps) {
  epoch_ = epoch;
  epochs_ = epochs;
  steps_ = steps;
  start_ = std::chrono::steady_clock::now();
  last_draw_ = {};
}

bool ProgressBar::due(std::int64_t step) const {
  return step >= steps_ || std::chrono::steady_clock::now() - last_draw_ >= std::chrono::milliseconds(100);
}

void ProgressBar::update(std::int64_t step, double loss, std::int64_t samples) {
  const auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? double(samples) / elapsed : 0;
  const double eta = step > 0 ? elapsed * double(steps_ - step) / double(step) : 0;
  const int width = 24;
  const int filled = steps_ > 0 ? int(width * step / steps_) : width;
  char loss_text[32] = "-";  // none logged yet
  if (!std::isnan(loss)) std::snprintf(loss_text, sizeof loss_text, "%.4f", loss);
  char line[256];
  std::snprintf(line, sizeof line, "epoch %lld/%lld %s%s%s%s %lld/%lld  loss %s  %.0f samples/s  ETA %d:%02d",
                static_cast<long long>(epoch_), static_cast<long long>(epochs_), color_ ? "\033[32m" : "",
                std::string(std::size_t(filled), '#').c_str(), color_ ? "\033[0m" : "",
                std::string(std::size_t(width - filled), '.').c_str(), static_cast<long long>(step),
                static_cast<long long>(steps_), loss_text, rate, int(eta) / 60, int(eta) % 60);
  out_ << "\r" << line << "\033[K" << std::flush;
}

void ProgressBar::clear() { out_ << "\r\033[K" << std::flush; }

}  // namespace plugtrain
