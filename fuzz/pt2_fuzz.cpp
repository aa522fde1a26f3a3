// The .pt2 reader on arbitrary bytes (a damaged or hostile archive): the zip layer (bounds,
// records, CRC-32s) and whatever of the graph a surviving archive holds. A ProgramError is the
// expected answer; anything else escaping, a crash, a hang or an allocation over libFuzzer's
// -rss_limit_mb is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "exported_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/plugtrain-fuzz-" + std::to_string(::getpid()) + ".pt2";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  try {
    plugtrain::exported::LoadedProgram loaded(plugtrain::exported::read_program(path), /*graph_pass=*/true);
  } catch (const plugtrain::exported::ProgramError&) {}
  return 0;
}
