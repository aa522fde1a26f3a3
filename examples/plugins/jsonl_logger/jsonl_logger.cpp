// An example logger plugin (SDK 4.1, plugtrain/logger.h): every figure a run logs as one JSON
// line in a file of the run folder, then the run's files and how it ended. A tracker of your own
// (a company's service, Weights & Biases) has the same shape: start() opens the run, log()
// queues figures without waiting, finish() sends the rest.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "plugtrain/logger.h"

namespace {

using namespace plugtrain;

// A JSON string: quotes, backslashes and control characters escaped.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// JSON has no nan or inf: they go as strings, as MLflow's REST API writes them.
std::string number(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

class JsonlLogger final : public Logger {
 public:
  explicit JsonlLogger(std::string file) : file_(std::move(file)) {}

  void start(const LoggedRun& run) override {
    if (run.resending()) return;  // every line was written while the run ran
    out_.open(run.folder() + "/" + file_, std::ios::app);
    if (!out_) throw std::runtime_error("cannot write " + run.folder() + "/" + file_);
    out_ << "{\"event\":\"start\",\"run\":" << quoted(run.run_name()) << ",\"params\":" << run.param_count()
         << ",\"resumed_step\":" << run.resumed_step() << "}\n";
    run.say("jsonl: figures go to " + run.folder() + "/" + file_);
  }

  void log(const LoggedMetrics& f) override {
    if (!out_.is_open()) return;
    out_ << "{\"event\":" << (f.kind() == MetricsKind::step ? "\"step\"" : "\"epoch\"") << ",\"step\":" << f.step()
         << ",\"epoch\":" << f.epoch() << ",\"time_ms\":" << f.time_ms();
    for (std::size_t i = 0; i < f.size(); ++i) out_ << "," << quoted(f.key(i)) << ":" << number(f.value(i));
    out_ << "}\n" << std::flush;
  }

  void artifact(const std::string& path, const std::string& name) override {
    if (out_.is_open())
      out_ << "{\"event\":\"file\",\"name\":" << quoted(name) << ",\"path\":" << quoted(path) << "}\n";
  }

  void finish(RunEnd end) override {
    if (!out_.is_open()) return;
    const char* how = end == RunEnd::finished ? "finished" : end == RunEnd::killed ? "killed" : "failed";
    out_ << "{\"event\":\"end\",\"how\":\"" << how << "\"}\n" << std::flush;
  }

 private:
  std::string file_;
  std::ofstream out_;
};

void register_jsonl(Registrar& host) {
  host.add_logger({"jsonl",
                   "every figure as a JSON line in a file of the run folder (an example logger plugin)",
                   {{"file", OptionType::string, std::string("figures.jsonl"), "the file, in the run folder"}},
                   [](const Options& o) {
                     const std::string& file = o.string("file");
                     if (file.empty() || file.find('/') != std::string::npos)
                       throw std::invalid_argument("logging.jsonl.file: \"" + file + "\" is not a file name");
                     return std::make_unique<JsonlLogger>(file);
                   }});
}

}  // namespace

PLUGTRAIN_PLUGIN(register_jsonl, PLUGTRAIN_KIND_LOGGERS, "jsonl_logger", "1.0.0", "logs figures as JSON lines")
