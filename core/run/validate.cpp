#include "run/validate.h"

#include "run/validate_jobs.h"

namespace plugtrain {

// The jobs in this order: a later one reads what an earlier one resolved (the plugins' options
// need the host, the cross-checks the task), and a file with several mistakes is told the first
// one in the order a person reads the experiment.
ValidatedRun validate(const RunRequest& request) {
  ValidatedRun v;
  v.file = parse_request_file(request);
  Experiment e = resolve_with_overrides(v.file, request);
  v.host = start_plugin_host(request, e);
  look_up_model(v, e);
  look_up_dataset(v, e);
  look_up_task(v, e);
  check_parts_fit(v);
  resolve_task_options(v, e);
  cross_check_experiment(v, e, request);
  // A trained run used again (evaluate, predict) logs nothing: its loggers' plugins need not be here.
  if (!request.use_trained) v.loggers = resolve_loggers(v.file, e, *v.host);
  check_model_init(v.file, e);
  find_resume(v, e, request);
  v.experiment = std::move(e);
  v.data = std::make_shared<RunData>(run_data_options(v), v.experiment);
  v.measure_again = request.measure_again;
  v.stop_after_epoch = request.stop_after_epoch;
  v.finished_checkpoint_is_done = request.resume.automatic();
  return v;
}

}  // namespace plugtrain
