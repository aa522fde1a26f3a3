// plugtrain SDK 5 — a plugin's one entry point: it registers what it has with the host.
//
//   void register_plugin(plugtrain::Registrar& host) {
//     host.add_backend(std::make_unique<MyBackend>());  // backend.h
//     host.add_model(my_model_spec());                  // model.h
//     host.add_dataset(my_dataset_spec());              // dataset.h
//     host.add_task(my_task_spec());                    // task.h
//     host.add_logger(my_logger_spec());                // logger.h
//   }
//   PLUGTRAIN_PLUGIN(register_plugin, PLUGTRAIN_KIND_BACKEND | PLUGTRAIN_KIND_MODELS, "name", "1.0.0", "one line")
//
// The kinds named in the handshake are exactly those the registration gives; a plugin whose
// registration throws, or gives nothing, contributes nothing and is refused with the reason.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <boost/dll/alias.hpp>
#include <torch/version.h>

#include "plugtrain/abi.h"

namespace plugtrain {

class Backend;
struct ModelSpec;
struct DatasetSpec;
struct TaskSpec;
struct LoggerSpec;

// Implemented by the host, handed to the plugin's registration. Each call takes the plugin's
// description of one thing; the host checks it when the registration returns.
class Registrar {
 public:
  virtual ~Registrar() = default;
  // A compute backend (backend.h); one per plugin.
  virtual void add_backend(std::unique_ptr<Backend> backend) = 0;
  // A model, data set, task or logger, by the name its spec gives.
  virtual void add_model(ModelSpec spec) = 0;
  virtual void add_dataset(DatasetSpec spec) = 0;
  virtual void add_task(TaskSpec spec) = 0;
  virtual void add_logger(LoggerSpec spec) = 0;
};

// For extension(name, version) overrides: true when `name` is `wanted` at a version from 1 to
// `newest`, the versions this plugin offers.
inline bool is_extension(const char* name, std::uint32_t version, const char* wanted, std::uint32_t newest) {
  return name != nullptr && std::strcmp(name, wanted) == 0 && version >= 1 && version <= newest;
}

}  // namespace plugtrain

// PLUGTRAIN_PLUGIN(register_fn, kinds, "name", "version", "one line")
// register_fn: void(plugtrain::Registrar&); kinds: PLUGTRAIN_KIND_* bits. Use once, at global scope.
#define PLUGTRAIN_PLUGIN(REGISTER_FN, KINDS, NAME, VERSION, DESCRIPTION) \
  PLUGTRAIN_PLUGIN_INFO(KINDS, NAME, VERSION, DESCRIPTION)              \
  BOOST_DLL_ALIAS(REGISTER_FN, plugtrain_register)
