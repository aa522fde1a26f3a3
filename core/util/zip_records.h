// The records of a zip archive (LibTorch's checkpoints and torch.export's .pt2 files are both
// zips), read from its central directory without trusting it: every offset, size and count is
// checked against the file and the limits before anything is read or allocated, and each stored
// record's CRC-32, which LibTorch writes but never checks when reading, can be checked too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "util/error.h"

namespace plugtrain {

// What is wrong with the archive, without the file's name: each caller says what the file is.
class ZipError : public Error {
 public:
  explicit ZipError(const std::string& message) : Error(message) {}
};

struct ZipLimits {
  std::uint64_t max_records = 1'000'000;  // more is a hostile directory, not a model
  bool check_crc = true;                  // read every stored record once to check its CRC-32
};

struct ZipRecords {
  int records = 0;           // records found
  int without_checksum = 0;  // records compressed or written without a CRC-32 (not checked)
};

// Throws ZipError for a truncated or damaged archive, a zip64 directory that disagrees with the
// 32-bit one (LibTorch's reader would follow the zip64 one), a record that points past the file
// or claims more bytes than the whole file has (a zip bomb), records that overlap each other or
// the directory, more records than the limit, or (check_crc) a stored record whose bytes do not
// match its CRC-32. Record names in its messages are escaped onto one line and cut at 64 bytes.
ZipRecords scan_zip_records(const std::filesystem::path& path, const ZipLimits& limits = {});

}  // namespace plugtrain
