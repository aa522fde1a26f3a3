// A data set a plugin registers (plugtrain/dataset.h, SDK 3.5), read through its factory into
// the host's Dataset: its inputs and targets checked, one line naming the data set, its plugin
// and the split for anything wrong.
#pragma once

#include <string>

#include "data/load_dataset.h"
#include "plugtrain/dataset.h"

namespace plugtrain::data {

// Both splits, unnormalised (load_dataset normalises them as it does its own readers').
// `fields_factory` (SDK 3.6, may be null): the data set's factory that also gives named fields.
LoadedData load_plugin_dataset(const DatasetSpec& spec, const DatasetFieldsFactory* fields_factory, const std::string& plugin,
                               const Options& options, const DatasetRequest& request);

}  // namespace plugtrain::data
