#include "use/run_tokenizer.h"

#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

OpenedTokenizer open_tokenizer_with(const RegisteredDataset& dataset, const std::filesystem::path& file) {
  const std::string who = "data set '" + dataset.spec.name + "' (plugin '" + dataset.plugin + "')";
  if (!dataset.spec.tokenizer) throw Error(who + " opens no tokenizer files ('" + file.string() + "')", exit_bad_input);
  OpenedTokenizer out;
  try {
    out.tokenizer = dataset.spec.tokenizer(file.string());
  } catch (const std::exception& e) { throw Error(who + ": " + first_line(e.what()), exit_bad_input); }
  if (!out.tokenizer) throw Error(who + ": its opener gave no tokenizer for '" + file.string() + "'", exit_bad_input);
  out.dataset = dataset.spec.name;
  out.file = file;
  return out;
}

OpenedTokenizer open_tokenizer_file(const PluginHost& host, const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw Error("'" + file.string() + "': no such file", exit_bad_input);
  std::string reasons;
  for (const RegisteredDataset& d : host.datasets().all()) {
    if (!d.spec.tokenizer) continue;
    try {
      return open_tokenizer_with(d, file);
    } catch (const Error& e) { reasons += (reasons.empty() ? "" : "; ") + std::string(e.what()); }
  }
  if (reasons.empty())
    throw Error("no data set plugin opens tokenizer files ('" + file.string() + "')", exit_bad_input);
  throw Error("'" + file.string() + "' is not a tokenizer any data set opens: " + reasons, exit_bad_input);
}

}  // namespace plugtrain
