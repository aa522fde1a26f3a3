// The run's loggers from plugins (SDK logger.h: TensorBoard, MLflow, a team's own): each gets the
// run's facts at the start, every logged step's and epoch's figures (the values metrics.csv has),
// the run's files at the end and how it ended. A logger that throws is said once and dropped:
// a tracker never stops training. Each logger's state() goes into every checkpoint (section
// "loggers") and comes back to it when the run resumes.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/state_section.h"
#include "plugtrain/logger.h"
#include "train/callback.h"

namespace plugtrain {

// What every logger is told of the run (LoggedRun's calls).
struct LoggerRunFacts {
  std::filesystem::path folder;
  std::string experiment, run_name;
  std::vector<std::pair<std::string, std::string>> params, tags;
  std::map<std::string, std::string> parents;  // logger name -> its parent's state (a sweep's trial)
  bool resending = false;                      // `plugtrain send-logs`
};

struct NamedLogger {
  std::string name;
  std::shared_ptr<Logger> logger;
  bool takes_files = true;  // LoggerSpec::takes_files
};

// A file of the run for the loggers: its path and its name relative to the run folder.
struct RunArtifact {
  std::filesystem::path path;
  std::string name;
};

class PluginLoggers : public Stateful {
 public:
  PluginLoggers(std::vector<NamedLogger> loggers, LoggerRunFacts facts, std::ostream& log);
  ~PluginLoggers() override;  // a run that ended without finish(): finish(RunEnd::failed)

  bool empty() const { return entries_.empty(); }
  // A logger still on takes the run's files (LoggerSpec::takes_files).
  bool any_takes_files() const;
  // `resumed_step`: the checkpoint's optimizer steps (0 for a fresh start).
  void start(std::int64_t resumed_step);
  void log(const LoggedMetrics& figures);
  // The files, then the end; once (later calls do nothing).
  void finish(RunEnd end, const std::vector<RunArtifact>& artifacts);

  // Each logger's state() now, where it has one.
  std::vector<std::pair<std::string, std::string>> states() const;

  const char* state_name() const override { return "loggers"; }
  void save_state(StateSection& out) const override;
  void load_state(const StateSection& in) override;

 private:
  struct Entry;
  // Calls `call` on each logger still on; one that throws is said and dropped.
  template <class Call>
  void each(const char* what, Call call);

  // What the loggers said, written to the log by the training thread (drain()): a logger's own
  // thread must not write the run's log, which the rest of the run writes without a lock.
  struct SaidLines {
    std::mutex lock;
    std::vector<std::string> lines;
  };
  void drain();

  std::vector<std::unique_ptr<Entry>> entries_;
  LoggerRunFacts facts_;
  std::ostream& log_;
  std::shared_ptr<SaidLines> said_;
  bool started_ = false;  // a run that failed before its first step told them nothing
  bool finished_ = false;
};

// The loop's side of PluginLoggers: logged steps, epochs and late tests as figures, the resume's
// state through the checkpoint.
class PluginLoggersCallback final : public Callback, public Stateful {
 public:
  explicit PluginLoggersCallback(std::shared_ptr<PluginLoggers> loggers) : loggers_(std::move(loggers)) {}
  void on_train_start(LoopState& state) override;
  void on_log_step(const LoopState& state, const StepFigures& figures) override;
  void on_epoch_end(LoopState& state, const EpochMetrics& m) override;
  void on_late_test(LoopState& state, const EpochMetrics& m) override;

  const char* state_name() const override { return loggers_->state_name(); }
  void save_state(StateSection& out) const override { loggers_->save_state(out); }
  void load_state(const StateSection& in) override { loggers_->load_state(in); }

 private:
  std::shared_ptr<PluginLoggers> loggers_;
};

}  // namespace plugtrain
