#include "train/callbacks/plugin_loggers.h"

#include <chrono>
#include <ostream>

#include "train/phase_timer.h"

namespace plugtrain {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One record's figures, as LoggedMetrics hands them over.
class MetricsRecord final : public LoggedMetrics {
 public:
  MetricsRecord(MetricsKind kind, std::int64_t step, std::int64_t epoch)
      : kind_(kind), step_(step), epoch_(epoch), time_ms_(now_ms()) {}
  void add(std::string key, double value) { values_.emplace_back(std::move(key), value); }
  MetricsKind kind() const override { return kind_; }
  std::int64_t step() const override { return step_; }
  std::int64_t epoch() const override { return epoch_; }
  std::int64_t time_ms() const override { return time_ms_; }
  std::size_t size() const override { return values_.size(); }
  std::string key(std::size_t i) const override { return values_.at(i).first; }
  double value(std::size_t i) const override { return values_.at(i).second; }

 private:
  MetricsKind kind_;
  std::int64_t step_, epoch_, time_ms_;
  std::vector<std::pair<std::string, double>> values_;
};

void add_split(MetricsRecord& r, const char* split, const std::optional<double>& loss,
               const std::vector<MetricValue>& values) {
  if (loss) r.add(std::string("epoch/") + split + "_loss", *loss);
  for (const MetricValue& v : values) r.add(std::string("epoch/") + split + "_" + v.name, v.value);
}

}  // namespace

// One logger, and the run as it sees it.
struct PluginLoggers::Entry final : LoggedRun {
  Entry(NamedLogger named, const LoggerRunFacts& facts, std::shared_ptr<SaidLines> said)
      : name(std::move(named.name)),
        logger(std::move(named.logger)),
        takes_files(named.takes_files),
        facts(facts),
        said(std::move(said)) {}

  std::string folder() const override { return facts.folder.string(); }
  std::string experiment() const override { return facts.experiment; }
  std::string run_name() const override { return facts.run_name; }
  std::size_t param_count() const override { return facts.params.size(); }
  std::string param_key(std::size_t i) const override { return facts.params.at(i).first; }
  std::string param_value(std::size_t i) const override { return facts.params.at(i).second; }
  std::size_t tag_count() const override { return facts.tags.size(); }
  std::string tag_key(std::size_t i) const override { return facts.tags.at(i).first; }
  std::string tag_value(std::size_t i) const override { return facts.tags.at(i).second; }
  std::string restored_state() const override { return restored; }
  std::int64_t resumed_step() const override { return resumed_at; }
  std::string parent_state() const override {
    const auto p = facts.parents.find(name);
    return p == facts.parents.end() ? "" : p->second;
  }
  bool resending() const override { return facts.resending; }
  // From any thread: the training thread writes it (PluginLoggers::drain).
  void say(const std::string& line) const override {
    const std::lock_guard<std::mutex> hold(said->lock);
    said->lines.push_back(name + ": " + line);
  }

  std::string name;
  std::shared_ptr<Logger> logger;
  bool takes_files;
  const LoggerRunFacts& facts;
  std::shared_ptr<SaidLines> said;
  std::string restored;
  std::int64_t resumed_at = 0;
  bool on = true;
};

PluginLoggers::PluginLoggers(std::vector<NamedLogger> loggers, LoggerRunFacts facts, std::ostream& log)
    : facts_(std::move(facts)), log_(log), said_(std::make_shared<SaidLines>()) {
  for (NamedLogger& l : loggers) entries_.push_back(std::make_unique<Entry>(std::move(l), facts_, said_));
}

PluginLoggers::~PluginLoggers() {
  try {
    finish(RunEnd::failed, {});
  } catch (...) {  // a destructor throws nothing: the run's own error is on its way
  }
}

void PluginLoggers::drain() {
  std::vector<std::string> lines;
  {
    const std::lock_guard<std::mutex> hold(said_->lock);
    lines.swap(said_->lines);
  }
  for (const std::string& line : lines) log_ << line << "\n";
  if (!lines.empty()) log_ << std::flush;
}

template <class Call>
void PluginLoggers::each(const char* what, Call call) {
  for (auto& e : entries_) {
    if (!e->on) continue;
    try {
      call(*e);
    } catch (const std::exception& error) {
      e->on = false;
      e->say(std::string("failed in ") + what + ": " + error.what() + "; this logger is off for the rest of the run");
    } catch (...) {
      e->on = false;
      e->say(std::string("failed in ") + what + " (not a std::exception); this logger is off for the rest of the run");
    }
  }
}

bool PluginLoggers::any_takes_files() const {
  for (const auto& e : entries_)
    if (e->on && e->takes_files) return true;
  return false;
}

void PluginLoggers::start(std::int64_t resumed_step) {
  started_ = true;
  each("start", [&](Entry& e) {
    e.resumed_at = resumed_step;
    e.logger->start(e);
  });
  drain();
}

void PluginLoggers::log(const LoggedMetrics& figures) {
  each("log", [&](Entry& e) { e.logger->log(figures); });
  drain();
}

void PluginLoggers::finish(RunEnd end, const std::vector<RunArtifact>& artifacts) {
  if (finished_ || !started_) return;
  finished_ = true;
  for (const RunArtifact& a : artifacts)
    each("artifact", [&](Entry& e) {
      if (e.takes_files) e.logger->artifact(a.path.string(), a.name);
    });
  each("finish", [&](Entry& e) { e.logger->finish(end); });
  drain();
}

std::vector<std::pair<std::string, std::string>> PluginLoggers::states() const {
  std::vector<std::pair<std::string, std::string>> states;
  for (const auto& e : entries_)
    if (e->on) {
      std::string state;
      try {
        state = e->logger->state();
      } catch (...) {  // a checkpoint is never lost to a logger
      }
      if (!state.empty()) states.emplace_back(e->name, std::move(state));
    }
  return states;
}

void PluginLoggers::save_state(StateSection& out) const {
  for (auto& [name, state] : states()) out.put_text(name, std::move(state));
}

void PluginLoggers::load_state(const StateSection& in) {
  for (auto& e : entries_)
    if (in.has(e->name)) e->restored = in.text_at(e->name);
}

// A restart of a run that had ended (--resume auto) trains nothing: the loggers are not told.
void PluginLoggersCallback::on_train_start(LoopState& state) {
  const bool resumed = !state.resumed_from.empty();
  const bool nothing_left = state.finished || (state.epochs_done >= state.epochs && state.sampler.batches_done == 0);
  if (resumed && nothing_left) return;
  loggers_->start(resumed ? state.step : 0);
}

void PluginLoggersCallback::on_log_step(const LoopState& state, const StepFigures& f) {
  MetricsRecord r(MetricsKind::step, state.step, state.epoch);
  r.add("train/loss_step", f.loss);
  r.add("train/lr", f.lr);
  r.add("train/samples_per_second", f.samples_per_second);
  loggers_->log(r);
}

void PluginLoggersCallback::on_epoch_end(LoopState& state, const EpochMetrics& m) {
  MetricsRecord r(MetricsKind::epoch, state.step, m.epoch);
  add_split(r, "train", m.train_loss, m.train);
  add_split(r, "test", m.test_loss, m.test);
  add_split(r, "val", m.val_loss, m.val);
  r.add("epoch/lr", m.lr);
  r.add("epoch/samples_per_second", m.samples_per_second);
  r.add("epoch/seconds", m.seconds);
  if (m.memory.process_used_bytes) r.add("epoch/memory_used_bytes", double(*m.memory.process_used_bytes));
  if (m.memory.process_peak_bytes) r.add("epoch/memory_peak_bytes", double(*m.memory.process_peak_bytes));
  if (m.phases.timed_steps > 0)
    for (int p = 0; p < kPhases; ++p)
      r.add(std::string("phase/") + to_string(Phase(p)) + "_share", m.phases.share(Phase(p)));
  loggers_->log(r);
}

// Only the test figures: the epoch's others went with its end.
void PluginLoggersCallback::on_late_test(LoopState& state, const EpochMetrics& m) {
  MetricsRecord r(MetricsKind::epoch, state.step, m.epoch);
  add_split(r, "test", m.test_loss, m.test);
  loggers_->log(r);
}

}  // namespace plugtrain
