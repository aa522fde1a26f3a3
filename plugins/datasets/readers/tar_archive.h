// Reading chosen members of a tar archive (plain, .gz, .bz2, .xz: whatever libarchive
// detects) into memory, without unpacking anything to disk. CIFAR's official downloads are
// such archives.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace plugtrain::data {

// The members whose path `wanted` accepts (it gets the path inside the archive), keyed by
// that path. Throws DataError naming the archive when it cannot be read or is corrupt.
// `max_member_bytes` bounds what one member may claim, so a hostile header cannot make it
// allocate without limit.
std::map<std::string, std::vector<uint8_t>> read_archive_members(const std::filesystem::path& archive,
                                                                 const std::function<bool(const std::string&)>& wanted,
                                                                 uint64_t max_member_bytes = uint64_t(1) << 31);

// True when the file starts like an archive libarchive can read (gzip, bzip2, xz or tar).
bool looks_like_archive(const std::filesystem::path& file);

}  // namespace plugtrain::data
