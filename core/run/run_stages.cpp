#include "run/run_stages.h"

#include "run/summary_writer.h"

namespace plugtrain {

RunStages run_stages() {
  RunStages s;
  s.validate = validate;
  s.trials = run_trials;
  s.plan = plan_run;
  s.prepare_outputs = prepare_outputs;
  s.build = build_run;
  s.train = [](BuiltRun& built) { return built.trainer->fit(); };
  s.summarise = write_summary;
  return s;
}

}  // namespace plugtrain
