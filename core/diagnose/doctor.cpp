#include "diagnose/doctor.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <sstream>
#include <thread>

#include "plugtrain/abi.h"
#include "plugins/cpu_fallbacks.h"
#include "plugins/plugin_loader.h"
#include "describe/plugins_report.h"
#include "run/build.h"
#include "run/plan.h"
#include "run/validate.h"
#include "util/clock.h"
#include "util/format.h"
#include "util/text.h"
#include "version.h"

namespace plugtrain {

namespace {

// One batch of 64 synthetic 8x8 images in 4 classes, an MLP with one hidden layer of 32, two
// epochs at a learning rate that makes the loss fall at once.
Experiment smoke_experiment(const ModelSpec& mlp, const DatasetSpec& synthetic, const std::string& backend, int devices) {
  Experiment e;
  e.source = "plugtrain doctor";
  e.experiment.name = "doctor";
  e.backend.name = backend;
  e.backend.devices = devices;
  e.backend.strategy = devices > 1 ? std::optional(RunStrategy::dp) : std::nullopt;
  e.model.name = mlp.name;
  std::map<std::string, OptionValue> options;
  for (const auto& o : mlp.options) options[o.name] = o.default_value;
  options["hidden"] = std::vector<std::int64_t>{32};
  options["dropout"] = 0.0;
  e.model.options = Options(options);
  e.data.dataset_name = synthetic.name;
  std::map<std::string, OptionValue> data_options;
  for (const auto& o : synthetic.options) data_options[o.name] = o.default_value;
  data_options["shape"] = std::vector<std::int64_t>{1, 8, 8};
  data_options["classes"] = std::int64_t{4};
  data_options["train_size"] = std::int64_t{64};
  data_options["test_size"] = std::int64_t{64};
  e.data.dataset_options = Options(data_options);
  e.data.batch_size = 64 / devices * devices == 64 ? 64 / devices : 64;
  e.data.global_batch_size = 64;
  e.optim.lr = 0.01;
  e.train.epochs = 2;
  e.train.log_interval = 0;
  e.checkpoint.save = CheckpointSave::none;
  e.experiment.seed = 1;
  return e;
}

SmokeTest smoke(const std::shared_ptr<PluginHost>& host, const RegisteredModel& mlp, const RegisteredDataset& synthetic,
                const std::string& backend, int devices) {
  SmokeTest t;
  t.backend = backend;
  t.what = devices > 1 ? std::to_string(devices) + " devices (dp)" : "1 device";
  const auto start = std::chrono::steady_clock::now();
  try {
    ValidatedRun run;
    run.experiment = smoke_experiment(mlp.spec, synthetic.spec, backend, devices);
    run.host = host;
    run.model = &mlp;
    run.dataset = &synthetic;
    run.data = std::make_shared<RunData>(run_data_options(run), run.experiment);
    const RunPlan plan = plan_run(run, run_trials(run, {}, std::nullopt), {}, std::nullopt);
    std::ostringstream quiet;
    const FallbackCounts before = plan.choice.backend->runtime_counts(true).cpu_fallbacks;
    std::unique_ptr<BuiltRun> built = build_run(run, plan, nullptr, nullptr, quiet);
    const TrainSummary s = built->trainer->fit();
    t.cpu_fallbacks = fallbacks_between(before, plan.choice.backend->runtime_counts(true).cpu_fallbacks);
    if (s.epochs.size() != 2) throw Error("trained " + std::to_string(s.epochs.size()) + " epochs instead of 2");
    t.first_loss = s.epochs[0].train_loss;
    t.last_loss = s.epochs[1].train_loss;
    if (!std::isfinite(t.first_loss) || !std::isfinite(t.last_loss))
      throw Error("the loss is not finite (" + std::to_string(t.last_loss) + ")");
    if (!(t.last_loss < t.first_loss)) throw Error("the loss did not fall over two epochs of one batch");
    t.passed = true;
  } catch (const std::exception& e) {
    t.reason = first_line(e.what());
  }
  t.seconds = seconds_since(start);
  return t;
}

std::string system_text() {
  utsname u{};
  ::uname(&u);
  return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

}  // namespace

DoctorReport run_doctor(const DoctorRequest& request) {
  DoctorReport report;
  report.versions = {{"plugtrain", PLUGTRAIN_VERSION},
                     {"LibTorch", host_torch_version()},
                     {"SDK ABI", std::to_string(PLUGTRAIN_SDK_ABI_MAJOR) + "." + std::to_string(PLUGTRAIN_SDK_ABI_MINOR)},
                     {"compiler", PLUGTRAIN_COMPILER},
                     {"C++ ABI", PLUGTRAIN_CXX_ABI_TAG}};
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  report.system = {{"os", system_text()},
                   {"cores", std::to_string(std::max(1u, std::thread::hardware_concurrency()))},
                   {"memory", format_bytes(pages > 0 && page > 0 ? std::optional<std::uint64_t>(std::uint64_t(pages) * page)
                                                               : std::nullopt)}};

  std::shared_ptr<PluginHost> host;
  std::vector<std::string> targets;
  if (request.experiment_file) {
    RunRequest r;
    r.experiment_file = *request.experiment_file;
    r.overrides = request.overrides;
    r.plugin_paths = request.plugin_paths;
    ValidatedRun run = validate(r);
    host = run.host;
    report.judged = select_backend(*host, run.experiment).backend->name();
    targets = {report.judged};
  } else {
    SearchOptions search;
    search.cli_paths = request.plugin_paths;
    host = std::make_shared<PluginHost>(search);
    for (const std::string& name : automatic_order(*host, Experiment{}))
      if (BackendHandle* b = host->backend(name); b && b->probe().usable()) targets.push_back(name);
  }
  const TrustedIds me = this_user();
  for (const SearchRoot& root : host->search_roots())
    report.search_path.push_back(
        {root.origin, root.ignored,
         root.ignored.empty() ? search_entry_ownership(root.path, me) : PathOwnership{root.path}});
  report.plugins_table = plugins_table(*host);
  report.plugins_json = plugins_json(*host);

  const RegisteredModel* mlp = host->models().find("mlp");
  // The bundled plugin's, even where another plugin shadows the name: the smoke test sets its options.
  const RegisteredDataset* synthetic = nullptr;
  for (const RegisteredDataset& d : host->datasets().all())
    if (d.spec.name == "synthetic" && d.plugin == "datasets") synthetic = &d;
  for (const std::string& name : targets) {
    if (!mlp || !synthetic) {
      report.smoke_tests.push_back({name, "1 device", false, 0, 0, 0,
                                    std::string("the smoke test needs the bundled ") +
                                        (!mlp ? "models plugin (model 'mlp')" : "datasets plugin (data set 'synthetic')") +
                                        "; none is loaded"});
      continue;
    }
    report.smoke_tests.push_back(smoke(host, *mlp, *synthetic, name, 1));
    BackendHandle* b = host->backend(name);
    const Capabilities& caps = b->capabilities();
    const bool has_dp = std::find(caps.strategies.begin(), caps.strategies.end(), Strategy::dp) != caps.strategies.end();
    if (b->probe().devices.size() >= 2 && has_dp) report.smoke_tests.push_back(smoke(host, *mlp, *synthetic, name, 2));
  }

  report.network = node_network();
  std::vector<std::string> failed;
  for (const auto& t : report.smoke_tests)
    if (!t.passed) failed.push_back(t.backend + " (" + t.what + "): " + t.reason);
  if (!report.network.problem.empty()) failed.push_back("network: " + report.network.problem);
  report.ok = !targets.empty() && failed.empty();
  if (targets.empty())
    report.verdict = "no usable backend: see the plugin list above for why each one is not";
  else if (!failed.empty())
    report.verdict = "failed: " + join(failed, "; ");
  else
    report.verdict = report.judged.empty() ? "every usable backend passed (" + join(targets) + ")"
                                           : "the experiment's backend, " + report.judged + ", passed";
  return report;
}

void print_doctor(const DoctorReport& report, std::ostream& out) {
  auto block = [&](const char* title, const std::vector<std::pair<std::string, std::string>>& rows) {
    out << title << "\n";
    for (const auto& [k, v] : rows) out << "  " << k << ": " << v << "\n";
  };
  block("versions", report.versions);
  block("system", report.system);
  out << "plugin search path (owner:group mode; a path others can change has its plugins refused)\n";
  for (const SearchPathCheck& c : report.search_path) {
    const PathOwnership& o = c.ownership;
    out << "  " << o.path.string() << "  (" << c.origin << ")  ";
    if (!c.ignored.empty())
      out << "ignored: " << c.ignored << "\n";
    else if (!o.exists)
      out << "not found\n";
    else
      out << o.owner << ":" << o.group << " " << o.mode << (o.problem.empty() ? "  ok" : "  INSECURE: " + o.problem)
          << "\n";
  }
  out << "\n" << report.plugins_table << "\nsmoke tests (mlp [32] on one batch of 64 synthetic samples, 2 epochs: the loss must fall)\n";
  for (const auto& t : report.smoke_tests) {
    char line[256];
    if (t.passed)
      std::snprintf(line, sizeof line, "  PASS  %-10s %-16s loss %.4f -> %.4f  %.1f s\n", t.backend.c_str(),
                    t.what.c_str(), t.first_loss, t.last_loss, t.seconds);
    else
      std::snprintf(line, sizeof line, "  FAIL  %-10s %-16s %.1f s: ", t.backend.c_str(), t.what.c_str(), t.seconds);
    out << line << (t.passed ? "" : t.reason + "\n");
    if (const std::string fallbacks = describe_fallbacks(t.cpu_fallbacks); !fallbacks.empty())
      out << "        cpu fallback: " << fallbacks << "\n";
  }
  out << "\n";
  print_node_network(report.network, out);
  out << "\ndoctor: " << report.verdict << "\n";
}

nlohmann::json doctor_json(const DoctorReport& report) {
  nlohmann::json j;
  for (const auto& [k, v] : report.versions) j["versions"][k] = v;
  for (const auto& [k, v] : report.system) j["system"][k] = v;
  j["search_path"] = nlohmann::json::array();
  for (const SearchPathCheck& c : report.search_path) {
    const PathOwnership& o = c.ownership;
    j["search_path"].push_back({{"path", o.path.string()},
                                {"origin", c.origin},
                                {"ignored", c.ignored},
                                {"exists", o.exists},
                                {"owner", o.owner},
                                {"group", o.group},
                                {"mode", o.mode},
                                {"secure", o.problem.empty()},
                                {"problem", o.problem}});
  }
  j["plugins"] = report.plugins_json["plugins"];
  j["smoke_tests"] = nlohmann::json::array();
  for (const auto& t : report.smoke_tests) {
    nlohmann::json s = {{"backend", t.backend}, {"what", t.what}, {"passed", t.passed}, {"seconds", t.seconds}};
    if (t.passed) {
      s["first_loss"] = t.first_loss;
      s["last_loss"] = t.last_loss;
    } else {
      s["reason"] = t.reason;
    }
    s["cpu_fallbacks"] = t.cpu_fallbacks;
    j["smoke_tests"].push_back(s);
  }
  j["network"] = node_network_json(report.network);
  j["judged_backend"] = report.judged.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.judged);
  j["ok"] = report.ok;
  j["verdict"] = report.verdict;
  return j;
}

}  // namespace plugtrain
