// plugtrain SDK 4 — a plugin's one entry point: it registers what it has with the host.
//
//   void register_plugin(plugtrain::Registrar& host) {
//     host.add_backend(std::make_unique<MyBackend>());       // backend.h
//     plugtrain::add_model(host, my_model_spec());            // model.h
//     plugtrain::add_dataset(host, my_dataset_spec());        // dataset.h
//     plugtrain::add_task(host, my_task_spec());              // task.h
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

#include <torch/version.h>
#include <boost/dll/alias.hpp>

#include "plugtrain/abi.h"

namespace plugtrain {

class Backend;
class ModelBuilder;
class DatasetBuilder;
class TaskBuilder;
class LoggerBuilder;

// Implemented by the host, handed to the plugin's registration. Calls are only ever appended.
class Registrar {
 public:
  virtual ~Registrar() = default;
  // A compute backend (backend.h); one per plugin.
  virtual void add_backend(std::unique_ptr<Backend> backend) = 0;
  // A model, data set or task by name: the returned builder describes it (valid until the
  // registration returns). model.h, dataset.h and task.h add them from their specs in one call.
  virtual ModelBuilder& add_model(const std::string& name) = 0;
  virtual DatasetBuilder& add_dataset(const std::string& name) = 0;
  virtual TaskBuilder& add_task(const std::string& name) = 0;
  // An extension the host offers, by name and version (docs/plugins.md lists them), or null
  // when this host has none: the plugin then does without.
  virtual void* host_extension(const char* name, std::uint32_t version) = 0;
  // SDK 4.1: a logger by name (logger.h adds it from its spec in one call).
  virtual LoggerBuilder& add_logger(const std::string& name) = 0;
  // SDK 4.3 (test only): appended. Where a person reads more about the plugin.
  virtual void homepage(const std::string& url) = 0;
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
  PLUGTRAIN_PLUGIN_INFO(KINDS, NAME, VERSION, DESCRIPTION)               \
  BOOST_DLL_ALIAS(REGISTER_FN, plugtrain_register)
