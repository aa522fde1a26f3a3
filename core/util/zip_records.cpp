#include "util/zip_records.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>

namespace plugtrain {

namespace {

// The zip format's little-endian fields (APPNOTE.TXT), read from a byte buffer.
std::uint64_t le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;

class ZipFile {
 public:
  explicit ZipFile(const std::filesystem::path& path) : in_(path, std::ios::binary) {
    if (!in_) fail("cannot be read");
    in_.seekg(0, std::ios::end);
    size_ = std::uint64_t(in_.tellg());
  }

  std::vector<unsigned char> read(std::uint64_t offset, std::uint64_t count) {
    if (offset > size_ || count > size_ - offset) fail("a zip structure points past its end");
    std::vector<unsigned char> bytes(count);
    in_.seekg(std::streamoff(offset));
    in_.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(count));
    if (!in_) fail("cannot be read");
    return bytes;
  }

  // CRC-32 of `count` bytes from `offset`, read in pieces.
  std::uint32_t crc(std::uint64_t offset, std::uint64_t count) {
    if (offset > size_ || count > size_ - offset) fail("a record runs past its end");
    in_.seekg(std::streamoff(offset));
    std::vector<char> chunk(1 << 20);
    uLong sum = crc32(0L, Z_NULL, 0);
    while (count > 0) {
      const std::size_t n = std::size_t(std::min<std::uint64_t>(count, chunk.size()));
      in_.read(chunk.data(), std::streamsize(n));
      if (!in_) fail("cannot be read");
      sum = crc32(sum, reinterpret_cast<const Bytef*>(chunk.data()), uInt(n));
      count -= n;
    }
    return std::uint32_t(sum);
  }

  std::uint64_t size() const { return size_; }

  [[noreturn]] void fail(const std::string& what) const { throw ZipError(what); }

 private:
  std::ifstream in_;
  std::uint64_t size_ = 0;
};

struct Directory {
  std::uint64_t entries = 0, offset = 0, size = 0;
};

Directory find_directory(ZipFile& zip) {
  const std::uint64_t tail = std::min<std::uint64_t>(zip.size(), 22 + 65535);
  const std::vector<unsigned char> end = zip.read(zip.size() - tail, tail);
  for (std::int64_t i = std::int64_t(end.size()) - 22; i >= 0; --i) {
    if (le(&end[i], 4) != kEndOfDirectory) continue;
    Directory d{le(&end[i + 10], 2), le(&end[i + 16], 4), le(&end[i + 12], 4)};
    const bool zip64 = d.entries == 0xFFFF || d.offset == 0xFFFFFFFF || d.size == 0xFFFFFFFF;
    if (zip64) {
      const std::uint64_t at = zip.size() - tail + std::uint64_t(i);
      if (at < 20) zip.fail("damaged zip64 directory");
      const std::vector<unsigned char> locator = zip.read(at - 20, 20);
      if (le(&locator[0], 4) != kZip64Locator) zip.fail("damaged zip64 directory");
      const std::vector<unsigned char> record = zip.read(le(&locator[8], 8), 56);
      if (le(&record[0], 4) != kZip64EndOfDirectory) zip.fail("damaged zip64 directory");
      d = {le(&record[32], 8), le(&record[48], 8), le(&record[40], 8)};
    }
    return d;
  }
  zip.fail("no zip directory (truncated, or not a zip)");
}

// One central-directory entry, its zip64 sizes and offset read from extra field 0x0001.
struct Entry {
  std::string name;
  std::uint64_t method = 0, crc = 0, stored = 0, uncompressed = 0, local = 0;
};

Entry read_entry(ZipFile& zip, const std::vector<unsigned char>& cd, std::size_t& at) {
  if (at + 46 > cd.size() || le(&cd[at], 4) != kDirectoryEntry) zip.fail("damaged zip directory");
  const unsigned char* e = &cd[at];
  Entry entry;
  entry.method = le(e + 10, 2), entry.crc = le(e + 16, 4);
  entry.stored = le(e + 20, 4), entry.uncompressed = le(e + 24, 4), entry.local = le(e + 42, 4);
  const std::uint64_t name_length = le(e + 28, 2), extra_length = le(e + 30, 2), comment_length = le(e + 32, 2);
  if (at + 46 + name_length + extra_length + comment_length > cd.size()) zip.fail("damaged zip directory");
  entry.name.assign(reinterpret_cast<const char*>(e + 46), name_length);
  // Zip64: sizes and offsets that do not fit 32 bits are in extra field 0x0001, in this order.
  for (std::uint64_t x = 0; x + 4 <= extra_length;) {
    const unsigned char* field = e + 46 + name_length + x;
    const std::uint64_t id = le(field, 2), length = le(field + 2, 2);
    if (x + 4 + length > extra_length) zip.fail("damaged zip directory");
    if (id == 0x0001) {
      std::uint64_t k = 4;
      for (std::uint64_t* value : {&entry.uncompressed, &entry.stored, &entry.local})
        if (*value == 0xFFFFFFFF && k + 8 <= 4 + length) *value = le(field + k, 8), k += 8;
    }
    x += 4 + length;
  }
  at += 46 + name_length + extra_length + comment_length;
  return entry;
}

// The record's bytes lie inside the file, and what it says it unpacks to is no more than the
// file itself: a 1 KB archive never makes its reader allocate gigabytes.
void check_bounds(ZipFile& zip, const Entry& entry) {
  if (entry.uncompressed > zip.size())
    zip.fail("record '" + entry.name + "' claims " + std::to_string(entry.uncompressed) +
             " bytes, more than the whole file's " + std::to_string(zip.size()) + " (a zip bomb?)");
  if (entry.method == 0 && entry.stored != entry.uncompressed)
    zip.fail("record '" + entry.name + "' is stored with two different sizes");
  const std::vector<unsigned char> header = zip.read(entry.local, 30);
  if (le(&header[0], 4) != kLocalHeader) zip.fail("damaged record '" + entry.name + "'");
  const std::uint64_t data = entry.local + 30 + le(&header[26], 2) + le(&header[28], 2);
  if (data > zip.size() || entry.stored > zip.size() - data) zip.fail("record '" + entry.name + "' runs past its end");
}

}  // namespace

ZipRecords scan_zip_records(const std::filesystem::path& path, const ZipLimits& limits) {
  ZipFile zip(path);
  const Directory directory = find_directory(zip);
  if (directory.entries > limits.max_records)
    zip.fail("it claims " + std::to_string(directory.entries) + " records, more than the limit of " +
             std::to_string(limits.max_records));
  const std::vector<unsigned char> cd = zip.read(directory.offset, directory.size);
  ZipRecords result;
  std::size_t at = 0;
  for (std::uint64_t n = 0; n < directory.entries; ++n) {
    const Entry entry = read_entry(zip, cd, at);
    check_bounds(zip, entry);
    ++result.records;
    if (entry.method != 0 || (entry.crc == 0 && entry.stored > 0)) {  // compressed (LibTorch never does) or no checksum
      ++result.without_checksum;
      continue;
    }
    if (!limits.check_crc) continue;
    const std::vector<unsigned char> header = zip.read(entry.local, 30);
    const std::uint64_t data = entry.local + 30 + le(&header[26], 2) + le(&header[28], 2);
    if (zip.crc(data, entry.stored) != entry.crc) zip.fail("record '" + entry.name + "' does not match its CRC-32");
  }
  return result;
}

}  // namespace plugtrain
