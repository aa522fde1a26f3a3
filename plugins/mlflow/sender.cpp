// The MLflow plugin's sender: its thread, the waits between tries and what it says (sender.h).
#include "sender.h"

#include <algorithm>
#include <exception>

#include "journal.h"

namespace plugtrain::mlflow {

Sender::Sender(const RunFiles& files, SendPlan plan, HttpSettings http, Say say)
    : files_(files),
      client_(plan.state.uri, std::move(http), &abort_),
      say_(std::move(say)),
      setup_(std::move(plan.setup)),
      resending_(plan.resending),
      reopen_(plan.reopen),
      maybe_created_(plan.maybe_created),
      sent_(plan.sent),
      state_(std::move(plan.state)),
      artifacts_(std::move(plan.artifacts)) {}

Sender::~Sender() { stop(); }

void Sender::try_setup() {
  const Outcome outcome = pass({&Sender::ensure_run, &Sender::send_params});
  std::unique_lock<std::mutex> lock(mutex_);
  const std::string line = after_pass_locked(outcome);
  work_ = true;  // the thread's first pass sends the rest
  lock.unlock();
  if (!line.empty()) say_(line);
}

void Sender::start() {
  thread_ = std::thread([this] { run_thread(); });
}

void Sender::notify() {
  std::lock_guard<std::mutex> lock(mutex_);
  work_ = true;
  drained_ = false;
  wake_.notify_one();
}

void Sender::add_artifact(const PendingArtifact& artifact) {
  std::lock_guard<std::mutex> lock(mutex_);
  artifacts_.push_back(artifact);
  files_.write_artifacts(artifacts_);
  work_ = true;
  drained_ = false;
  wake_.notify_one();
}

void Sender::request_end(const std::string& status, std::int64_t end_time_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_.end = status;
  state_.end_time = end_time_ms;
  end_sent_ = false;
  files_.write_state(state_);
  work_ = true;
  drained_ = false;
  wake_.notify_one();
}

bool Sender::flush(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  // One try now whatever the wait was, then the short waits again while the deadline allows.
  work_ = true;
  drained_ = false;
  retry_at_ = Clock::now();
  backoff_ = std::chrono::milliseconds(500);
  flushing_ = true;
  wake_.notify_one();
  passed_.wait_until(lock, deadline, [this] { return halted_ || (drained_ && !work_); });
  return drained_ && !work_;
}

void Sender::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    abort_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

bool Sender::send_all(Clock::duration patience) {
  const std::vector<Step> steps = {&Sender::ensure_run, &Sender::send_params, &Sender::send_metrics,
                                   &Sender::send_artifacts, &Sender::send_end};
  Clock::time_point give_up = Clock::now() + patience;
  while (true) {
    const std::size_t progress_before = figures_sent_ + files_sent_;
    const Outcome outcome = pass(steps);
    std::unique_lock<std::mutex> lock(mutex_);
    const std::string line = after_pass_locked(outcome);
    const Clock::time_point retry_at = retry_at_;
    lock.unlock();
    if (!line.empty()) say_(line);
    if (!outcome.transient()) return outcome.ok();
    if (figures_sent_ + files_sent_ > progress_before) give_up = Clock::now() + patience;
    if (retry_at > give_up) return false;
    std::this_thread::sleep_until(retry_at);
  }
}

void Sender::run_thread() {
  const std::vector<Step> steps = {&Sender::ensure_run, &Sender::send_params, &Sender::send_metrics,
                                   &Sender::send_artifacts, &Sender::send_end};
  std::unique_lock<std::mutex> lock(mutex_);
  while (wait_for_work(lock)) {
    work_ = false;
    lock.unlock();
    const Outcome outcome = pass(steps);
    lock.lock();
    const std::string line = after_pass_locked(outcome);
    if (line.empty()) continue;
    lock.unlock();
    say_(line);
    lock.lock();
  }
}

// False when the thread is to end. While failing, new figures wait for the retry time: no
// request per log() against a server that is away.
bool Sender::wait_for_work(std::unique_lock<std::mutex>& lock) {
  while (!stopping_) {
    if (halted_ || !work_) {
      wake_.wait(lock);
    } else if (Clock::now() >= retry_at_) {
      return true;
    } else {
      wake_.wait_until(lock, retry_at_);
    }
  }
  return false;
}

Outcome Sender::pass(const std::vector<Step>& steps) {
  try {
    for (Step step : steps) {
      Outcome outcome = (this->*step)();
      if (!outcome.ok()) return outcome;
    }
    return Outcome();
  } catch (const std::exception& e) {  // a kept file that cannot be written
    return Outcome::failed(Outcome::Kind::permanent, e.what());
  }
}

// Backoff and the lines to say after a pass; "" when there is nothing to say.
std::string Sender::after_pass_locked(const Outcome& outcome) {
  std::string line;
  const std::string& uri = client_.uri();
  if (outcome.ok()) {
    failure_.clear();
    backoff_ = std::chrono::milliseconds(500);
    // What is logged in the next second goes in one request (flush() does not wait for it): a
    // run that logs every step would otherwise send a request per step, and on a small machine
    // the server's work for each takes the training's cores. MLflow's own asynchronous logging
    // buffers the same way.
    retry_at_ = Clock::now() + std::chrono::seconds(1);
    drained_ = !work_;
    if (failing_ && !resending_ && !stopping_) {
      line = uri + " reachable again; " + std::to_string(figures_sent_ - figures_at_failure_) + " kept figures sent";
    }
    failing_ = false;
  } else if (!outcome.transient()) {
    failure_ = outcome.why;
    failure_status_ = outcome.status;
    drained_ = false;
    halted_ = true;
    if (!stopping_) {
      // status 0: no answer was refused, a kept file could not be written.
      line = (outcome.status == 0 ? "sending stopped: " : uri + " refused ") + outcome.why +
             "; nothing more is sent; figures kept in " + files_.folder().string();
    }
  } else {
    failure_ = outcome.why;
    drained_ = false;
    work_ = true;
    retry_at_ = Clock::now() + backoff_;
    // While the run waits at its end, a server that comes back within its flush_seconds is
    // found within a second; otherwise the wait doubles to 30 s.
    backoff_ = std::min<Clock::duration>(backoff_ * 2, flushing_ ? std::chrono::seconds(1) : std::chrono::seconds(30));
    if (!failing_ && !resending_ && !stopping_) {
      line = uri + " unreachable (" + outcome.why + "); training goes on; figures kept in " + files_.folder().string();
    }
    if (!failing_) figures_at_failure_ = figures_sent_;
    failing_ = true;
  }
  passed_.notify_all();
  return line;
}

void Sender::save_state() {
  std::lock_guard<std::mutex> lock(mutex_);
  files_.write_state(state_);
}

KeptState Sender::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

std::size_t Sender::figures_unsent() const { return count_journal_lines(files_.journal(), sent_); }

std::size_t Sender::files_unsent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return artifacts_.size();
}

bool Sender::end_unsent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !state_.end.empty() && !end_sent_;
}

std::string Sender::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

bool Sender::refused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return halted_;
}

bool Sender::answered_refusal() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return halted_ && failure_status_ != 0;
}

}  // namespace plugtrain::mlflow
