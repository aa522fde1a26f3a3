// Writing a file so that readers see the old content or the whole new one, never half:
// write a temporary file beside it, flush it to disk, rename it over the target.
#pragma once

#include <filesystem>
#include <string>

namespace plugtrain {

// Throws Error naming the path when any step fails.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace plugtrain
