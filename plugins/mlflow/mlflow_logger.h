// The "mlflow" logger: a run's figures, params and files to an MLflow tracking server. The
// server never holds training back: log() only appends to a journal in the run folder, a thread
// of its own sends from there, and what it could not send is kept for `plugtrain send-logs`.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "plugtrain/logger.h"

#include "journal.h"
#include "run_files.h"
#include "sender.h"

namespace plugtrain::mlflow {

// The [logging.mlflow] table, resolved (register_mlflow.cpp).
struct MlflowOptions {
  std::string uri;         // http(s)://..., no trailing "/"
  std::string experiment;  // "": the run's experiment
  std::string run_name;    // "": the run's name
  HttpSettings http;       // timeout, ca_file, login
  double flush_seconds = 10;
  bool artifacts = true;
};

class MlflowLogger final : public Logger {
 public:
  explicit MlflowLogger(MlflowOptions options) : options_(std::move(options)) {}
  ~MlflowLogger() override;

  void start(const LoggedRun& run) override;
  void log(const LoggedMetrics& figures) override;
  void artifact(const std::string& path, const std::string& name) override;
  void finish(RunEnd end) override;
  std::string state() const override;

 private:
  enum class Mode { idle, training, resending, done };

  void start_training(const LoggedRun& run);
  void start_resend(const LoggedRun& run);
  void finish_resend(RunEnd end);
  KeptState choose_run(const LoggedRun& run) const;
  RunSetup describe_run(const LoggedRun& run, const KeptState& state) const;
  void open_journal();
  std::unique_ptr<Sender> make_sender(SendPlan plan);
  void report(bool everything_sent) const;
  void say(const std::string& line) const;

  MlflowOptions options_;
  std::atomic<const LoggedRun*> run_{nullptr};  // null once the run may be gone (say nothing then)
  std::unique_ptr<RunFiles> files_;
  std::unique_ptr<Sender> sender_;
  JournalWriter journal_;
  bool journal_failed_ = false;
  // A resumed run's keys and the highest step the journal already has for each.
  std::map<std::string, std::int64_t> logged_before_;
  Mode mode_ = Mode::idle;
};

}  // namespace plugtrain::mlflow
