// The MLflow plugin's sender: one thread that brings the server up to date with what the run
// folder keeps, at most once a second, in order: the run (created, or set RUNNING again), its params, the journal's
// metrics from the acknowledged offset on, the files, the end status. A failure that may pass
// (no answer, 408, 429, 5xx) is tried again after 0.5 s, doubling to 30 s; one that will not (any
// other 4xx) stops the sending, and everything stays kept for `plugtrain send-logs`.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mlflow_client.h"
#include "run_files.h"

namespace plugtrain::mlflow {

// Where a sender takes up.
struct SendPlan {
  KeptState state;
  RunSetup setup;
  bool reopen = false;         // a continued run: set it RUNNING again first
  bool maybe_created = false;  // an earlier try may have created the run: look for it before creating
  bool resending = false;      // `plugtrain send-logs`: no lines about the server coming and going
  std::vector<PendingArtifact> artifacts;
  std::uint64_t sent = 0;  // the journal's acknowledged offset
};

class Sender {
 public:
  using Say = std::function<void(const std::string&)>;
  using Clock = std::chrono::steady_clock;

  Sender(const RunFiles& files, SendPlan plan, HttpSettings http, Say say);
  ~Sender();
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  // On the caller's thread, before start(): one try at the run and its params (the run id is
  // then known at once when the server is there).
  void try_setup();
  void start();
  // New lines in the journal.
  void notify();
  void add_artifact(const PendingArtifact& artifact);
  // The end status to send last; kept in state.json.
  void request_end(const std::string& status, std::int64_t end_time_ms);
  // Wakes the thread for an immediate try and waits until everything is acknowledged (true),
  // the server refused something, or `deadline`.
  bool flush(Clock::time_point deadline);
  // Ends a request in flight and joins the thread.
  void stop();
  // `plugtrain send-logs`: passes on the caller's thread until everything went (true), the
  // server refused something, or it failed for `patience` without progress.
  bool send_all(Clock::duration patience);

  void save_state();
  KeptState state() const;
  std::size_t figures_sent() const { return figures_sent_; }
  std::size_t files_sent() const { return files_sent_; }
  // After stop(): what is still kept.
  std::size_t figures_unsent() const;
  std::size_t files_unsent() const;
  bool end_unsent() const;
  // Why the last pass failed ("" when it did not), and whether sending stopped for good: the
  // server refused (answered_refusal) or this end would not go on (a certificate, a kept file).
  std::string failure() const;
  bool refused() const;
  bool answered_refusal() const;

 private:
  using Step = Outcome (Sender::*)();
  void run_thread();
  bool wait_for_work(std::unique_lock<std::mutex>& lock);
  Outcome pass(const std::vector<Step>& steps);
  std::string after_pass_locked(const Outcome& outcome);

  // The steps of a pass (send_steps.cpp); each is ok when nothing of its kind is left.
  Outcome ensure_run();
  Outcome create_run();
  Outcome send_params();
  Outcome send_metrics();
  Outcome send_artifacts();
  Outcome upload(const PendingArtifact& artifact);
  std::string write_local(const PendingArtifact& artifact, const std::filesystem::path& folder);
  Outcome drop_artifacts(const std::string& line);
  Outcome send_end();
  void drop_artifact(const PendingArtifact& artifact);

  const RunFiles& files_;
  std::atomic<bool> abort_{false};
  MlflowClient client_;
  Say say_;
  RunSetup setup_;
  bool resending_;

  // The thread's own.
  bool reopen_;
  bool maybe_created_;
  std::size_t params_done_ = 0;
  std::uint64_t sent_;
  bool said_unserved_ = false;

  mutable std::mutex mutex_;
  std::condition_variable wake_;    // work for the thread, or stop
  std::condition_variable passed_;  // a pass ended (flush waits on it)
  KeptState state_;
  std::vector<PendingArtifact> artifacts_;
  bool end_sent_ = false;
  bool work_ = true;
  bool drained_ = false;  // the last pass sent everything there was
  bool stopping_ = false;
  bool flushing_ = false;  // the run waits at its end: retry every second at most
  bool halted_ = false;    // the server refused something: no more passes
  bool failing_ = false;
  std::size_t figures_at_failure_ = 0;
  std::string failure_;
  long failure_status_ = 0;  // the HTTP status of the failure; 0: no answer
  Clock::time_point retry_at_{};
  Clock::duration backoff_ = std::chrono::milliseconds(500);
  std::atomic<std::size_t> figures_sent_{0};
  std::atomic<std::size_t> files_sent_{0};
  std::thread thread_;
};

}  // namespace plugtrain::mlflow
