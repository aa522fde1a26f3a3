// A plugin whose handshake and registration disagree (TEST_CASE): "extra" names models but also
// registers a data set; "missing" names models and data sets but registers a model only;
// "nothing" names models and registers nothing. The host refuses each with one line and goes on.
#include <ATen/ATen.h>

#include "plugtrain/dataset.h"
#include "plugtrain/model.h"

namespace {

using namespace plugtrain;

void add_one_model(Registrar& host) {
  host.add_model({TEST_PLUGIN_NAME "_model", "never built", {}, [](const ModelInputs&, const Options&) {
                    return std::shared_ptr<Model>();
                  }});
}

void register_plugin(Registrar& host) {
  const std::string c = TEST_CASE;
  if (c == "nothing") return;
  add_one_model(host);
  if (c == "extra") {
    DatasetSpec data;
    data.name = TEST_PLUGIN_NAME "_data";
    data.read = [](const DatasetQuery&, const Options&) { return DatasetRead{}; };
    host.add_dataset(data);
  }
}

}  // namespace

PLUGTRAIN_PLUGIN(register_plugin, TEST_KINDS, TEST_PLUGIN_NAME, "0.0.1", "handshake and registration disagree")
