#include "util/zip_records.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <tuple>
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

// The length of the valid UTF-8 character at s[i] (0 where it is not one), its code point in cp.
std::size_t utf8_at(const std::string& s, std::size_t i, std::uint32_t& cp) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  cp = n == 1 ? c : c & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char t = static_cast<unsigned char>(s[i + k]);
    if ((t & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (t & 0x3F);
  }
  static constexpr std::uint32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};  // longer is an overlong form
  if (cp < kShortest[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// A record's name as every message shows it. The archive chose it (up to 64 KB of any bytes), so
// control bytes, line separators (U+0085, U+2028, U+2029) and bytes that are not UTF-8 show as
// \xNN, and the name is cut after 64 bytes with "...": the message stays one readable line.
std::string shown(const std::string& name) {
  constexpr std::size_t kMostBytes = 64;
  std::string out;
  const auto escape = [&out](char byte) {
    static constexpr char kHex[] = "0123456789abcdef";
    const unsigned char c = static_cast<unsigned char>(byte);
    out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
  };
  std::size_t i = 0;
  while (i < name.size()) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_at(name, i, cp);
    if (i + std::max<std::size_t>(n, 1) > kMostBytes) break;
    if (n == 0 || cp < 0x20 || cp == 0x7F) {
      escape(name[i++]);
      continue;
    }
    if (cp == 0x85 || cp == 0x2028 || cp == 0x2029)
      for (std::size_t k = 0; k < n; ++k) escape(name[i + k]);
    else
      out.append(name, i, n);
    i += n;
  }
  return i < name.size() ? out + "..." : out;
}

std::string record(const std::string& name) { return "record '" + shown(name) + "'"; }

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

  // CRC-32 of `count` bytes from `offset`, read in pieces through one buffer of at most 1 MB,
  // allocated when first needed and grown only as far as a record needs.
  std::uint32_t crc(std::uint64_t offset, std::uint64_t count) {
    if (offset > size_ || count > size_ - offset) fail("a record runs past its end");
    uLong sum = crc32(0L, Z_NULL, 0);
    if (count == 0) return std::uint32_t(sum);
    const std::size_t wanted = std::size_t(std::min<std::uint64_t>(count, kMostBuffer));
    if (buffer_.size() < wanted)
      buffer_ = std::vector<char>(std::max(wanted, std::min(2 * buffer_.size(), kMostBuffer)));
    in_.seekg(std::streamoff(offset));
    while (count > 0) {
      const std::size_t n = std::size_t(std::min<std::uint64_t>(count, buffer_.size()));
      in_.read(buffer_.data(), std::streamsize(n));
      if (!in_) fail("cannot be read");
      sum = crc32(sum, reinterpret_cast<const Bytef*>(buffer_.data()), uInt(n));
      count -= n;
    }
    return std::uint32_t(sum);
  }

  std::uint64_t size() const { return size_; }

  [[noreturn]] void fail(const std::string& what) const { throw ZipError(what); }

 private:
  static constexpr std::size_t kMostBuffer = 1 << 20;
  std::ifstream in_;
  std::uint64_t size_ = 0;
  std::vector<char> buffer_;
};

struct Directory {
  std::uint64_t entries = 0, offset = 0, size = 0;
};

// miniz (LibTorch's reader) switches to the zip64 record whenever a valid locator sits right
// before the end record, saturated 32-bit fields or not: it looks for the record just before the
// locator, then where the locator points. Its values are the ones read; a 32-bit value that is
// not saturated must say the same, or this scan and LibTorch would see two different archives.
Directory zip64_directory(ZipFile& zip, std::uint64_t locator_at, const Directory& narrow) {
  const std::vector<unsigned char> locator = zip.read(locator_at, 20);
  std::vector<unsigned char> end = zip.read(locator_at - 56, 56);
  if (le(&end[0], 4) != kZip64EndOfDirectory) {
    const std::uint64_t at = le(&locator[8], 8);
    if (at > zip.size() || zip.size() - at < 56) zip.fail("damaged zip64 directory");
    end = zip.read(at, 56);
    if (le(&end[0], 4) != kZip64EndOfDirectory) zip.fail("damaged zip64 directory");
  }
  const Directory wide{le(&end[32], 8), le(&end[48], 8), le(&end[40], 8)};
  if ((narrow.entries != 0xFFFF && narrow.entries != wide.entries) ||
      (narrow.offset != 0xFFFFFFFF && narrow.offset != wide.offset) ||
      (narrow.size != 0xFFFFFFFF && narrow.size != wide.size))
    zip.fail("its zip64 directory disagrees with its zip directory");
  return wide;
}

Directory find_directory(ZipFile& zip) {
  const std::uint64_t tail = std::min<std::uint64_t>(zip.size(), 22 + 65535);
  const std::vector<unsigned char> end = zip.read(zip.size() - tail, tail);
  for (std::int64_t i = std::int64_t(end.size()) - 22; i >= 0; --i) {
    if (le(&end[i], 4) != kEndOfDirectory) continue;
    const std::uint64_t at = zip.size() - tail + std::uint64_t(i);
    Directory d{le(&end[i + 10], 2), le(&end[i + 16], 4), le(&end[i + 12], 4)};
    if (at >= 20 + 56 && le(&zip.read(at - 20, 4)[0], 4) == kZip64Locator)
      d = zip64_directory(zip, at - 20, d);
    else if (d.entries == 0xFFFF || d.offset == 0xFFFFFFFF || d.size == 0xFFFFFFFF)
      zip.fail("damaged zip64 directory");
    if (d.offset > at || d.size > at - d.offset) zip.fail("damaged zip directory");  // it ends before its end record
    return d;
  }
  zip.fail("no zip directory (truncated, or not a zip)");
}

// One central-directory entry, its zip64 sizes and offset read from extra field 0x0001.
struct Entry {
  std::string name;
  std::uint64_t method = 0, crc = 0, stored = 0, uncompressed = 0, local = 0;
  std::uint64_t data = 0;  // where its bytes start, after its local header
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
// file itself: a 1 KB archive never makes its reader allocate gigabytes. Returns where its bytes
// start, after its local header.
std::uint64_t check_bounds(ZipFile& zip, const Entry& entry) {
  if (entry.uncompressed > zip.size())
    zip.fail(record(entry.name) + " claims " + std::to_string(entry.uncompressed) +
             " bytes, more than the whole file's " + std::to_string(zip.size()) + " (a zip bomb?)");
  if (entry.method == 0 && entry.stored != entry.uncompressed)
    zip.fail(record(entry.name) + " is stored with two different sizes");
  const std::vector<unsigned char> header = zip.read(entry.local, 30);
  if (le(&header[0], 4) != kLocalHeader) zip.fail("damaged " + record(entry.name));
  const std::uint64_t data = entry.local + 30 + le(&header[26], 2) + le(&header[28], 2);
  if (data > zip.size() || entry.stored > zip.size() - data) zip.fail(record(entry.name) + " runs past its end");
  return data;
}

// No two records share bytes, and the directory shares none with a record: otherwise 100,000
// entries could name one header, each read (and CRC'd) again, a file's size times over. Sorted by
// start, the spans are apart when each starts at or after the end of the one before.
void check_no_overlap(ZipFile& zip, const std::vector<Entry>& entries, const Directory& directory) {
  struct Span {
    std::uint64_t start, end;
    std::size_t entry;  // entries.size() for the directory
    bool operator<(const Span& o) const { return std::tie(start, end, entry) < std::tie(o.start, o.end, o.entry); }
  };
  std::vector<Span> spans;
  spans.reserve(entries.size() + 1);
  for (std::size_t i = 0; i < entries.size(); ++i)
    spans.push_back({entries[i].local, entries[i].data + entries[i].stored, i});
  if (directory.size > 0) spans.push_back({directory.offset, directory.offset + directory.size, entries.size()});
  std::sort(spans.begin(), spans.end());
  for (std::size_t k = 1; k < spans.size(); ++k) {
    const Span &a = spans[k - 1], &b = spans[k];
    if (b.start >= a.end) continue;
    if (std::max(a.entry, b.entry) == entries.size())
      zip.fail("the zip directory overlaps " + record(entries[std::min(a.entry, b.entry)].name));
    zip.fail("records '" + shown(entries[a.entry].name) + "' and '" + shown(entries[b.entry].name) +
             "' overlap in the file");
  }
}

}  // namespace

ZipRecords scan_zip_records(const std::filesystem::path& path, const ZipLimits& limits) {
  ZipFile zip(path);
  const Directory directory = find_directory(zip);
  if (directory.entries > limits.max_records)
    zip.fail("it claims " + std::to_string(directory.entries) + " records, more than the limit of " +
             std::to_string(limits.max_records));
  const std::vector<unsigned char> cd = zip.read(directory.offset, directory.size);
  std::vector<Entry> entries;
  entries.reserve(std::size_t(std::min<std::uint64_t>(directory.entries, cd.size() / 46)));
  std::size_t at = 0;
  for (std::uint64_t n = 0; n < directory.entries; ++n) {
    entries.push_back(read_entry(zip, cd, at));
    entries.back().data = check_bounds(zip, entries.back());
  }
  check_no_overlap(zip, entries, directory);
  ZipRecords result;
  for (const Entry& entry : entries) {
    ++result.records;
    if (entry.method != 0 || (entry.crc == 0 && entry.stored > 0)) {  // compressed (LibTorch never does) or no checksum
      ++result.without_checksum;
      continue;
    }
    if (limits.check_crc && zip.crc(entry.data, entry.stored) != entry.crc)
      zip.fail(record(entry.name) + " does not match its CRC-32");
  }
  return result;
}

}  // namespace plugtrain
