// Checkpoints are LibTorch archives: zip files whose every record (each tensor's bytes, the
// pickled structure) carries a CRC-32 that LibTorch writes but does not check when reading. This
// checks them all, so a flipped byte is found before a run resumes from it or exports it.
#pragma once

#include <filesystem>
#include <string>

namespace plugtrain {

struct ZipIntegrity {
  int records = 0;          // records checked
  int without_checksum = 0; // records written without a CRC-32 (not checkable)
};

// Throws CheckpointError naming the file and the first damaged or truncated record.
ZipIntegrity verify_zip_records(const std::filesystem::path& path);

}  // namespace plugtrain
