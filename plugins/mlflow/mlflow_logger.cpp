// The "mlflow" logger (mlflow_logger.h): which MLflow run a plugtrain run logs to, and the
// training thread's part of the work (journal lines, never a network call).
#include "mlflow_logger.h"

#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include "mlflow_format.h"

namespace plugtrain::mlflow {

namespace {

const char* end_status(RunEnd end) {
  switch (end) {
    case RunEnd::finished: return "FINISHED";
    case RunEnd::failed: return "FAILED";
    case RunEnd::killed: return "KILLED";
  }
  return "FAILED";
}

// Sets a tag, replacing an earlier value of the same key (ours win over the host's).
void set_tag(KeyValues& tags, const std::string& key, const std::string& value) {
  const std::string clean_key = sanitize_key(key);
  const std::string clean_value = cut_utf8(value, kMaxTagValueLength);
  for (auto& tag : tags) {
    if (tag.first == clean_key) {
      tag.second = clean_value;
      return;
    }
  }
  tags.emplace_back(clean_key, clean_value);
}

// "1 figure", "2 figures".
std::string count_of(std::size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

Sender::Clock::duration seconds_of(double seconds) {
  return std::chrono::duration_cast<Sender::Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

MlflowLogger::~MlflowLogger() {
  // finish() was not called (the host is unwinding): end the thread, and say nothing more.
  run_ = nullptr;
  if (sender_) sender_->stop();
}

void MlflowLogger::say(const std::string& line) const {
  if (const LoggedRun* run = run_.load()) run->say(line);
}

void MlflowLogger::start(const LoggedRun& run) {
  run_ = &run;
  files_ = std::make_unique<RunFiles>(std::filesystem::path(run.folder()) / "mlflow");
  try {
    if (run.resending()) {
      start_resend(run);
    } else {
      start_training(run);
    }
  } catch (const std::exception& e) {  // the run folder cannot be written: training goes on without us
    say(std::string("nothing is sent: ") + e.what());
    if (sender_) sender_->stop();
    mode_ = Mode::done;
  }
}

void MlflowLogger::start_training(const LoggedRun& run) {
  std::filesystem::create_directories(files_->folder());
  KeptState state = choose_run(run);
  SendPlan plan;
  plan.reopen = !state.run_id.empty();
  plan.maybe_created = state.run_id.empty() && !state.run_uuid.empty();
  if (state.run_uuid.empty()) state.run_uuid = random_hex_id();
  plan.setup = describe_run(run, state);
  open_journal();
  plan.sent = files_->read_sent();
  // A journal shorter than its acknowledged offset was replaced: send it all (the server
  // recognises what it has).
  if (plan.sent > journal_size(files_->journal())) plan.sent = 0;
  plan.artifacts = files_->read_artifacts();
  plan.state = std::move(state);
  sender_ = make_sender(std::move(plan));
  sender_->save_state();
  sender_->try_setup();
  sender_->start();
  mode_ = Mode::training;
}

// `plugtrain send-logs`: the sender is made here and sends in finish(), which knows how the run
// ended (a run killed before its end recorded none).
void MlflowLogger::start_resend(const LoggedRun& run) {
  mode_ = Mode::done;
  std::optional<KeptState> kept = files_->read_state();
  if (!kept || kept->uri.empty()) {
    say("nothing kept in " + files_->folder().string());
    return;
  }
  if (kept->experiment.empty()) kept->experiment = options_.experiment.empty() ? run.experiment() : options_.experiment;
  if (kept->run_name.empty()) kept->run_name = options_.run_name.empty() ? run.run_name() : options_.run_name;
  SendPlan plan;
  plan.resending = true;
  plan.maybe_created = kept->run_id.empty();
  plan.setup = describe_run(run, *kept);
  plan.sent = files_->read_sent();
  if (plan.sent > journal_size(files_->journal())) plan.sent = 0;
  plan.artifacts = files_->read_artifacts();
  plan.state = *kept;
  sender_ = make_sender(std::move(plan));
  mode_ = Mode::resending;
}

// The run to log to: the one the checkpoint names (a resume), else the one this folder's
// state.json names (a resume from no checkpoint), else a new one. A run on another server than
// the option names is left alone: a new run there.
KeptState MlflowLogger::choose_run(const LoggedRun& run) const {
  std::optional<KeptState> kept = files_->read_state();
  if (kept && kept->uri != options_.uri) kept.reset();
  const std::optional<KeptState> restored = identity_from_json(run.restored_state());
  KeptState state;
  if (restored && restored->uri == options_.uri) {
    if (kept && kept->run_uuid == restored->run_uuid) {
      state = *kept;
    } else {
      state.params_sent = !restored->run_id.empty();  // a continued run's params went with it
    }
    if (state.run_id.empty()) state.run_id = restored->run_id;
    if (state.experiment_id.empty()) state.experiment_id = restored->experiment_id;
    state.run_uuid = restored->run_uuid;
  } else if (kept) {
    state = *kept;
  }
  state.uri = options_.uri;
  // A sweep's trial goes into its parent's experiment (each trial has an experiment name of its
  // own), where MLflow shows it under the parent, unless the trial names one.
  const std::optional<KeptState> parent = identity_from_json(run.parent_state());
  if (state.experiment_id.empty() && options_.experiment.empty() && parent && parent->uri == state.uri)
    state.experiment_id = parent->experiment_id;
  if (state.experiment.empty()) state.experiment = options_.experiment.empty() ? run.experiment() : options_.experiment;
  if (state.run_name.empty()) state.run_name = options_.run_name.empty() ? run.run_name() : options_.run_name;
  if (state.start_time == 0) state.start_time = unix_ms_now();
  state.end.clear();
  state.end_time = 0;
  return state;
}

RunSetup MlflowLogger::describe_run(const LoggedRun& run, const KeptState& state) const {
  RunSetup setup;
  setup.experiment_name = cut_utf8(state.experiment, 500);  // MLflow's longest experiment name
  setup.run_name = state.run_name;
  setup.start_time_ms = state.start_time;
  for (std::size_t i = 0; i < run.tag_count(); ++i) set_tag(setup.tags, run.tag_key(i), run.tag_value(i));
  set_tag(setup.tags, "mlflow.source.name", "plugtrain");
  set_tag(setup.tags, "mlflow.source.type", "LOCAL");
  const char* user = std::getenv("USER");
  if (user != nullptr && *user != '\0') set_tag(setup.tags, "mlflow.user", user);
  set_tag(setup.tags, "mlflow.runName", state.run_name);
  set_tag(setup.tags, "plugtrain.run_uuid", state.run_uuid);
  const std::optional<KeptState> parent = identity_from_json(run.parent_state());
  if (parent && parent->uri == state.uri && !parent->run_id.empty()) {
    set_tag(setup.tags, "mlflow.parentRunId", parent->run_id);
  }
  // Two keys that become one after sanitizing would be a changed param: the first one stays.
  std::set<std::string> keys;
  for (std::size_t i = 0; i < run.param_count(); ++i) {
    std::string key = sanitize_key(run.param_key(i));
    if (!keys.insert(key).second) continue;
    setup.params.emplace_back(std::move(key), cut_utf8(run.param_value(i), kMaxParamValueLength));
  }
  return setup;
}

void MlflowLogger::open_journal() {
  const std::filesystem::path path = files_->journal();
  if (!journal_.open(path)) throw std::runtime_error("cannot write " + path.string());
  logged_before_ = highest_steps(path);
}

std::unique_ptr<Sender> MlflowLogger::make_sender(SendPlan plan) {
  return std::make_unique<Sender>(*files_, std::move(plan), options_.http,
                                  [this](const std::string& line) { say(line); });
}

void MlflowLogger::log(const LoggedMetrics& figures) {
  if (mode_ != Mode::training || journal_failed_) return;
  try {
    const std::int64_t step = figures.step();
    const std::int64_t time_ms = figures.time_ms();  // the figures' own time: a resend is the same bytes
    bool appended = false;
    for (std::size_t i = 0; i < figures.size(); ++i) {
      const std::string key = sanitize_key(figures.key(i));
      const auto before = logged_before_.find(key);
      if (before != logged_before_.end() && step <= before->second) continue;  // the killed attempt's
      appended = journal_.append(metric_line(key, figures.value(i), step, time_ms)) || appended;
    }
    if (!appended) return;
    if (!journal_.flush()) {
      journal_failed_ = true;
      say("cannot write " + files_->journal().string() + ": figures from step " + std::to_string(step) +
          " on are neither kept nor sent");
    }
    sender_->notify();
  } catch (const std::exception& e) {
    journal_failed_ = true;
    say(std::string("figures no longer kept: ") + e.what());
  }
}

void MlflowLogger::artifact(const std::string& path, const std::string& name) {
  if (mode_ != Mode::training || !options_.artifacts) return;
  try {
    sender_->add_artifact({path, name});
  } catch (const std::exception& e) { say(name + " not uploaded: " + e.what()); }
}

void MlflowLogger::finish(RunEnd end) {
  if (mode_ == Mode::resending) return finish_resend(end);
  if (mode_ != Mode::training) return;
  mode_ = Mode::done;
  try {
    journal_.close();
    sender_->request_end(end_status(end), unix_ms_now());
    const bool everything_sent = sender_->flush(Sender::Clock::now() + seconds_of(options_.flush_seconds));
    sender_->stop();
    report(everything_sent);
  } catch (const std::exception& e) {
    sender_->stop();
    say(std::string("the run's end is not recorded: ") + e.what());
  }
}

void MlflowLogger::finish_resend(RunEnd end) {
  mode_ = Mode::done;
  try {
    if (sender_->state().end.empty()) sender_->request_end(end_status(end), unix_ms_now());
    // As long as the server takes what is sent; flush_seconds without progress ends it.
    report(sender_->send_all(seconds_of(options_.flush_seconds)));
  } catch (const std::exception& e) { say(std::string("the run's end is not recorded: ") + e.what()); }
}

void MlflowLogger::report(bool everything_sent) const {
  const KeptState state = sender_->state();
  const std::size_t sent = sender_->figures_sent() + sender_->files_sent();
  if (everything_sent && sent == 0 && run_.load() != nullptr && run_.load()->resending()) {
    say("nothing left to send: run " + state.run_id + " at " +
        MlflowClient::page_of(state.uri, state.experiment_id, state.run_id));
    return;
  }
  if (everything_sent) {
    say("run " + state.run_id + " at " + MlflowClient::page_of(state.uri, state.experiment_id, state.run_id) + ": " +
        count_of(sender_->figures_sent(), "figure") + ", " + count_of(sender_->files_sent(), "file"));
    return;
  }
  const std::size_t figures = sender_->figures_unsent();
  const std::size_t files = sender_->files_unsent();
  const std::string what = figures == 0 && files == 0 && sender_->end_unsent()
                               ? std::string("the run's end status")
                               : count_of(figures, "figure") + " and " + count_of(files, "file");
  const std::string why = !sender_->refused()           ? state.uri + " unreachable"
                          : sender_->answered_refusal() ? state.uri + " refused " + sender_->failure()
                                                        : sender_->failure();
  say(what + " not sent (" + why + "); kept in " + files_->folder().string() + "; plugtrain send-logs " +
      files_->folder().parent_path().string() + " sends them");
}

std::string MlflowLogger::state() const { return sender_ ? identity_json(sender_->state()) : std::string(); }

}  // namespace plugtrain::mlflow
