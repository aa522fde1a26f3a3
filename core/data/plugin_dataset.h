// A data set a plugin registers (plugtrain/dataset.h, SDK 3.5; the bundled ones too), read into
// the host's Dataset: its inputs and targets checked, one line naming the data set, its plugin
// and the split for anything wrong.
#pragma once

#include <string>

#include "data/load_dataset.h"
#include "plugtrain/dataset.h"

namespace plugtrain::data {

// Both splits, unnormalised (load_dataset normalises them as it does every data set): read by
// the data set's reader (SDK 3.7), fields factory (3.6) or factory (3.5), then checked.
LoadedData load_plugin_dataset(const DataOptions& options);

}  // namespace plugtrain::data
