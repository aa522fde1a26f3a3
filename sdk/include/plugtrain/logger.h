// plugtrain SDK 5 — loggers from plugins: where a run's metrics go besides its own records.
//
// A run always writes its record (metrics.csv, summary.json, train.log) into its run folder.
// Loggers send the same metrics elsewhere: a TensorBoard event file, an MLflow server, an
// in-house tracker. A plugin registers loggers by name, each with an option schema (the
// experiment's [logging.<name>] table, checked before any work like a model's options) and a
// factory; a [logging.<name>] table switches the logger on for a run.
//
//   class MyLogger final : public plugtrain::Logger { ... };
//   host.add_logger({"mine", "one line", {{"path", OptionType::string, std::string("x"), "doc"}},
//                    [](const plugtrain::Options& o) { return std::make_unique<MyLogger>(o); }});
//
// Only the run's first process logs. The host calls a logger from the training thread, in this
// order: start, log (every train.log_interval steps and at every epoch's end), artifact (each
// file, at the end), finish. log() must not wait on a network: queue, and send from a thread of
// your own. finish() may wait, but briefly: what cannot be sent then, keep under the run folder
// and send when LoggedRun::resending() is true (`plugtrain send-logs RUN`) or when the run resumes.
//
// LoggedRun and LoggedMetrics are implemented by the host; Logger by the plugin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "plugtrain/options.h"
#include "plugtrain/plugin.h"

namespace plugtrain {

// How a run ended, for a tracker's run status.
enum class RunEnd { finished = 0, failed = 1, killed = 2 };

// One run as a logger sees it. Host-implemented; valid until finish() returns.
class LoggedRun {
 public:
  virtual ~LoggedRun() = default;
  // The run folder; a logger keeps its own files in folder()/<logger name>/.
  virtual std::string folder() const = 0;
  // The experiment's name ([experiment] name) and the run's: "<name>/version_<N>" (a sweep: the sweep's folder name).
  virtual std::string experiment() const = 0;
  virtual std::string run_name() const = 0;
  // The resolved experiment, flattened with "/" ("optim/lr" = "0.001"), in key order.
  virtual std::size_t param_count() const = 0;
  virtual std::string param_key(std::size_t i) const = 0;
  virtual std::string param_value(std::size_t i) const = 0;
  // What the host says of the run: plugtrain.version, plugtrain.backend, plugtrain.device,
  // plugtrain.world_size, plugtrain.run_folder (a sweep: plugtrain.sweep).
  virtual std::size_t tag_count() const = 0;
  virtual std::string tag_key(std::size_t i) const = 0;
  virtual std::string tag_value(std::size_t i) const = 0;
  // What state() returned into the checkpoint this run resumed from; "" for a fresh start.
  virtual std::string restored_state() const = 0;
  // The optimizer steps the checkpoint held (0 for a fresh start): metrics logged after it by an
  // earlier, killed attempt will be logged again, with the same values (the timings aside).
  virtual std::int64_t resumed_step() const = 0;
  // In a sweep's trial: what this logger's state() returned for the sweep's own run (its
  // parent); "" otherwise.
  virtual std::string parent_state() const = 0;
  // True for `plugtrain send-logs RUN`: no training follows; send what an earlier process kept,
  // then finish.
  virtual bool resending() const = 0;
  // A line for the run's log (the console and train.log), prefixed with the logger's name. From
  // any thread; the host writes it from the training thread, after the call into the logger
  // that is under way (or the next one).
  virtual void say(const std::string& line) const = 0;
};

// Which metrics a record holds.
enum class MetricsKind { step = 0, epoch = 1 };

// One record: a logged step's or an epoch's metrics. Host-implemented; valid during log().
// Keys: a step's "train/loss_step", "train/lr", "train/samples_per_second"; an epoch's
// "epoch/train_loss", "epoch/train_<metric>", "epoch/test_loss", "epoch/test_<metric>",
// "epoch/val_..." with a validation split, "epoch/lr", "epoch/samples_per_second",
// "epoch/seconds", "epoch/memory_used_bytes" and "phase/<phase>_share" where measured.
// The values are those metrics.csv has.
class LoggedMetrics {
 public:
  virtual ~LoggedMetrics() = default;
  virtual MetricsKind kind() const = 0;
  virtual std::int64_t step() const = 0;     // optimizer steps done, over the whole run
  virtual std::int64_t epoch() const = 0;    // the epoch (1-based) the metrics belong to
  virtual std::int64_t time_ms() const = 0;  // when they were measured, ms since the Unix epoch
  virtual std::size_t size() const = 0;
  virtual std::string key(std::size_t i) const = 0;
  virtual double value(std::size_t i) const = 0;
};

// A run's logger, made by the spec's factory. Implemented by the plugin.
class Logger {
 public:
  virtual ~Logger() = default;
  // Once, before the first step (or the resend).
  virtual void start(const LoggedRun& run) = 0;
  // Every logged step and every epoch; on the training thread: do not block.
  virtual void log(const LoggedMetrics& metrics) = 0;
  // At the end: a file of the run (summary.json, metrics.csv, experiment.toml, classes.json, the
  // exported weights model.safetensors) and its name relative to the run folder.
  virtual void artifact(const std::string& path, const std::string& name) = 0;
  // Once, last. `end` says how the run ended.
  virtual void finish(RunEnd end) = 0;
  // Kept in every checkpoint and handed back by LoggedRun::restored_state() when the run
  // resumes (a tracker's run id); also what a sweep's trials get as parent_state().
  virtual std::string state() const { return ""; }
};

// Builds a run's logger from its [logging.<name>] table; throws std::exception with one line
// naming the option ("logging.mine.path: ...") when an option cannot work.
using LoggerFactory = std::function<std::unique_ptr<Logger>(const Options& options)>;

struct LoggerSpec {
  std::string name;  // [logging.<name>]
  std::string description;
  std::vector<OptionSpec> options;
  LoggerFactory factory;
  // The run's files at its end (artifact()). The host exports the weights (model.safetensors)
  // only for a run with a logger that takes them.
  bool takes_files = true;
  std::vector<OptionRule> rules = {};  // what its option values may be (options.h)
};

}  // namespace plugtrain
