#include "readers/sentencepiece_library.h"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

namespace bundled_datasets {

namespace {

// Where the module is: beside the code that asks (the data-sets plugin: <plugins>/sentencepiece/),
// or, for a program in the build's bin/ that links the readers (tests), in the plugin folder.
std::vector<std::filesystem::path> module_candidates() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&module_candidates), &info) == 0 || !info.dli_fname) return {};
  const std::filesystem::path here = std::filesystem::path(info.dli_fname).parent_path();
  const std::string name = "sentencepiece/plugtrain_sentencepiece.so";
  return {here / name, here.parent_path() / "lib" / "plugtrain" / "plugins" / name};
}

const SentencePieceLibrary& load_library() {
  std::string tried;
  for (const std::filesystem::path& file : module_candidates()) {
    if (!std::filesystem::exists(file)) {
      tried += (tried.empty() ? "" : ", ") + file.string();
      continue;
    }
    // Never closed; DEEPBIND: its libraries' symbols before the process's (the header says why).
    void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!handle) throw std::runtime_error("SentencePiece cannot be loaded: " + std::string(::dlerror()));
    using Entry = const SentencePieceLibrary* (*)();
    const auto entry = reinterpret_cast<Entry>(::dlsym(handle, "plugtrain_sentencepiece_library"));
    if (!entry) throw std::runtime_error(file.string() + " is not plugtrain's SentencePiece module");
    return *entry();
  }
  throw std::runtime_error("SentencePiece is not installed with this plugin (no " + tried + ")");
}

}  // namespace

const SentencePieceLibrary& sentencepiece_library() {
  static const SentencePieceLibrary& library = load_library();
  return library;
}

}  // namespace bundled_datasets
