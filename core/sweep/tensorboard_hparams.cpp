#include "sweep/tensorboard_hparams.h"

#include <cstdlib>

#include "logging/protobuf_wire.h"
#include "logging/tensorboard_writer.h"
#include "sweep/sweep_report.h"

namespace plugtrain {

using namespace wire;

namespace {

// Every rewrite replaces the file with this name, so a report can be rebuilt any number of times.
const char* const kFile = "events.out.tfevents.0.plugtrain-hparams";

// How a setting reads: tensorboard.hparams.DataType DATA_TYPE_STRING = 1, DATA_TYPE_BOOL = 2,
// DATA_TYPE_FLOAT64 = 3.
int data_type_of(const std::string& toml_text) {
  if (toml_text == "true" || toml_text == "false") return 2;
  char* end = nullptr;
  std::strtod(toml_text.c_str(), &end);
  return !toml_text.empty() && end && *end == '\0' ? 3 : 1;
}

// google.protobuf.Value { double number_value = 2; string string_value = 3; bool bool_value = 4; }
std::string value_message(const std::string& toml_text) {
  std::string v;
  switch (data_type_of(toml_text)) {
    case 2: field_int64(v, 4, toml_text == "true"); break;
    case 3: field_double(v, 2, std::strtod(toml_text.c_str(), nullptr)); break;
    default: {
      std::string text = toml_text;
      if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
      field_bytes(v, 3, text);
    }
  }
  return v;
}

// The type of a varied key over all runs (strings when they differ).
int data_type(const SweepReport& report, const std::string& key) {
  int type = 0;
  for (const RunRecord& run : report.runs) {
    auto it = run.settings.find(key);
    if (it == run.settings.end()) continue;
    const int t = data_type_of(it->second);
    if (type != 0 && type != t) return 1;
    type = t;
  }
  return type == 0 ? 1 : type;
}

// HParamsPluginData { int32 version = 1; Experiment experiment = 2; SessionStartInfo session_start_info = 3;
// SessionEndInfo session_end_info = 4; }, version 0 (left out, as protobuf does for 0).
std::string plugin_data(int field, const std::string& message) {
  std::string data;
  field_bytes(data, field, message);
  return data;
}

}  // namespace

void write_hparams(const SweepReport& report, const std::filesystem::path& folder) {
  // Experiment { repeated HParamInfo hparam_infos = 4; repeated MetricInfo metric_infos = 5; }
  // HParamInfo { string name = 1; }  MetricInfo { MetricName name = 1; }  MetricName { string tag = 2; }
  std::string experiment;
  for (const auto& key : report.varied) {
    // HParamInfo { string name = 1; DataType type = 4; }
    std::string info;
    field_bytes(info, 1, key);
    field_int64(info, 4, data_type(report, key));
    field_bytes(experiment, 4, info);
  }
  for (const std::string& tag : {"epoch/test_" + report.metric, std::string("epoch/test_loss"),
                                 std::string("epoch/train_loss"), std::string("epoch/samples_per_second")}) {
    std::string name, info;
    field_bytes(name, 2, tag);
    field_bytes(info, 1, name);
    field_bytes(experiment, 5, info);
  }
  TensorBoardWriter root(folder, kFile);
  root.add_plugin_summary("_hparams_/experiment", "hparams", plugin_data(2, experiment));
  root.flush();

  for (const RunRecord& run : report.runs) {
    // SessionStartInfo { map<string, Value> hparams = 1; }: map entries { string key = 1; Value value = 2; }
    std::string start;
    for (const auto& key : report.varied) {
      auto it = run.settings.find(key);
      std::string entry;
      field_bytes(entry, 1, key);
      field_bytes(entry, 2, value_message(it == run.settings.end() ? "" : it->second));
      field_bytes(start, 1, entry);
    }
    // SessionEndInfo { Status status = 1; }: STATUS_SUCCESS = 1, STATUS_RUNNING = 3 (not finished yet)
    std::string end;
    field_int64(end, 1, run.interrupted ? 3 : 1);
    TensorBoardWriter writer(run.folder / "tensorboard", kFile);
    writer.add_plugin_summary("_hparams_/session_start_info", "hparams", plugin_data(3, start));
    writer.add_plugin_summary("_hparams_/session_end_info", "hparams", plugin_data(4, end));
    writer.flush();
  }
}

}  // namespace plugtrain
