// How long discovering and probing every plugin takes (goal: at most 300 ms).
//
//  ColdDiscoverAndProbe  - the first PluginHost in this process: real dlopen of every plugin
//                          and its dependencies (libtorch_cuda for the CUDA plugin), handshake,
//                          factory, probe. Runs once: later hosts find the libraries loaded.
//  WarmDiscoverAndProbe  - the same again with the libraries already mapped.
//  PluginsCommandProcess - `plugtrain plugins --json` as a fresh process: everything a user
//                          waits for, LibTorch's own load included.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "plugins/plugin_host.h"

namespace {

void probe_all() {
  plugtrain::SearchOptions options;
  options.use_environment = false;
  plugtrain::PluginHost host(options);
  for (auto& backend : host.backends()) benchmark::DoNotOptimize(backend.probe());
}

void ColdDiscoverAndProbe(benchmark::State& state) {
  for (auto _ : state) probe_all();
}
BENCHMARK(ColdDiscoverAndProbe)->Iterations(1)->Unit(benchmark::kMillisecond);

void WarmDiscoverAndProbe(benchmark::State& state) {
  for (auto _ : state) probe_all();
}
BENCHMARK(WarmDiscoverAndProbe)->Unit(benchmark::kMillisecond);

void PluginsCommandProcess(benchmark::State& state) {
  const std::string command = std::string("env -u PLUGTRAIN_PLUGIN_PATH '") + PLUGTRAIN_EXE + "' plugins --json >/dev/null";
  for (auto _ : state) {
    if (std::system(command.c_str()) != 0) state.SkipWithError("plugtrain plugins failed");
  }
}
BENCHMARK(PluginsCommandProcess)->Iterations(5)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
