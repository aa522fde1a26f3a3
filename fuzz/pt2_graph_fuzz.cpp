// The .pt2 reader past its zip layer: the input is an archive's records, which this harness
// packs into a valid archive (right CRC-32s, so the mutations reach the JSON graph and the
// weights), then reads, compiles and runs once on the CPU, the way `plugtrain run` would:
//   models/model.json SEP data/weights/model_weights_config.json SEP weight_0 SEP weight_1 ...
// with SEP the line "\n%%\n" (fuzz/corpus/pt2_graph holds real exports in this form).
// A ProgramError, or an operator's own c10::Error while running, is the expected answer.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <ATen/ops/zeros.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/utils.h>

#include "exported_model.h"

namespace {

using namespace plugtrain::exported;

std::vector<std::string> records_of(const std::string& input) {
  std::vector<std::string> parts;
  const std::string separator = "\n%%\n";
  std::size_t from = 0;
  for (std::size_t at; (at = input.find(separator, from)) != std::string::npos; from = at + separator.size())
    parts.push_back(input.substr(from, at - from));
  parts.push_back(input.substr(from));
  return parts;
}

void write_archive(const std::string& path, const std::vector<std::string>& parts) {
  caffe2::serialize::PyTorchStreamWriter writer(path);
  auto put = [&](const std::string& name, const std::string& bytes) {
    writer.writeRecord(name, bytes.data(), bytes.size());
  };
  put("archive_format", "pt2");
  put("byteorder", "little");
  put("models/model.json", parts[0]);
  put("data/weights/model_weights_config.json", parts.size() > 1 ? parts[1] : "{\"config\": {}}");
  put("data/constants/model_constants_config.json", "{\"config\": {}}");
  for (std::size_t i = 2; i < parts.size(); ++i) put("data/weights/weight_" + std::to_string(i - 2), parts[i]);
  writer.writeEndOfFile();
}

// One forward on the CPU: the weights bound, each user input zeros of its exported shape (a
// symbolic size taken as 2), as ExportedModel::forward_batch does.
void run_once(const LoadedProgram& loaded) {
  const Program& p = loaded.program;
  std::vector<c10::IValue> values(loaded.graph.slot_count());
  for (const GraphInput& in : p.inputs) {
    const int slot = loaded.graph.slot_of(in.value);
    if (in.kind == InputKind::parameter || in.kind == InputKind::buffer) values[slot] = p.weights.at(in.target);
    if (in.kind == InputKind::tensor_constant) values[slot] = p.constants.at(in.target);
    if (in.kind != InputKind::user_input) continue;
    const auto shape = p.shapes.find(in.value);
    if (shape == p.shapes.end()) return;
    std::vector<std::int64_t> sizes;
    std::int64_t numel = 1;
    for (const auto& s : shape->second.sizes) {
      const std::int64_t n = sizes.emplace_back(s.value_or(2));
      if (n < 0 || n > (1 << 16) || (numel *= n) > (1 << 16))
        return;  // a seed's inputs are small: a mutated shape is not run
    }
    values[slot] = at::zeros(sizes, at::TensorOptions().dtype(shape->second.dtype));
  }
  torch::NoGradGuard no_grad;
  loaded.graph.run(values, /*training=*/false, c10::kCPU);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/plugtrain-fuzz-" + std::to_string(::getpid()) + "-graph.pt2";
  write_archive(path, records_of(std::string(reinterpret_cast<const char*>(data), size)));
  try {
    const LoadedProgram loaded(read_program(path), /*graph_pass=*/true);
    run_once(loaded);
  } catch (const ProgramError&) {
  } catch (const c10::Error&) {  // an operator refusing its inputs, as eager PyTorch would
  }
  return 0;
}
