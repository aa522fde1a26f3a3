// scan_zip_records on archives written here byte by byte: well-formed ones (stored records, empty
// ones, ones larger than its read buffer, a zip64 directory that agrees) pass; a zip64 directory
// that disagrees with the 32-bit one, records that share bytes with each other or with the
// directory, and a damaged record are refused in one line, its name escaped and cut.
// ctest-label: unit
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "util/zip_records.h"

namespace plugtrain::testing {
namespace zip_records_test {

namespace fs = std::filesystem;

void put(std::string& zip, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) zip += static_cast<char>((value >> (8 * i)) & 0xff);
}

std::uint32_t crc_of(const std::string& data) {
  return std::uint32_t(crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), uInt(data.size())));
}

// What a central directory entry says about one stored record.
struct Listed {
  std::string name;
  std::uint64_t size = 0;
  std::uint32_t crc = 0;
  std::uint64_t local = 0;  // where its local header starts
};

// Appends a stored record's local header (with `extra` as its extra field) and bytes.
Listed add_record(std::string& zip, const std::string& name, const std::string& data, const std::string& extra = "") {
  const Listed listed{name, data.size(), crc_of(data), zip.size()};
  // signature, version, flags, method (stored), time and date
  put(zip, 0x04034b50, 4), put(zip, 20, 2), put(zip, 0, 2), put(zip, 0, 2), put(zip, 0, 4);
  put(zip, listed.crc, 4), put(zip, data.size(), 4), put(zip, data.size(), 4);
  put(zip, name.size(), 2), put(zip, extra.size(), 2);
  zip += name + extra + data;
  return listed;
}

struct Span {
  std::uint64_t offset = 0, size = 0;
};

// Appends a central directory listing `entries`; returns where it lies.
Span add_directory(std::string& zip, const std::vector<Listed>& entries) {
  const std::uint64_t start = zip.size();
  for (const Listed& e : entries) {
    put(zip, 0x02014b50, 4), put(zip, 20, 2), put(zip, 20, 2), put(zip, 0, 2), put(zip, 0, 2), put(zip, 0, 4);
    put(zip, e.crc, 4), put(zip, e.size, 4), put(zip, e.size, 4);
    put(zip, e.name.size(), 2), put(zip, 0, 2), put(zip, 0, 2), put(zip, 0, 2), put(zip, 0, 2), put(zip, 0, 4);
    put(zip, e.local, 4);
    zip += e.name;
  }
  return {start, zip.size() - start};
}

// The 32-bit end record.
void add_end(std::string& zip, std::uint64_t entries, Span directory) {
  put(zip, 0x06054b50, 4), put(zip, 0, 2), put(zip, 0, 2), put(zip, entries, 2), put(zip, entries, 2);
  put(zip, directory.size, 4), put(zip, directory.offset, 4), put(zip, 0, 2);
}

// A zip64 end record; returns where it starts.
std::uint64_t add_zip64_end(std::string& zip, std::uint64_t entries, Span directory) {
  const std::uint64_t at = zip.size();
  put(zip, 0x06064b50, 4), put(zip, 44, 8), put(zip, 45, 2), put(zip, 45, 2), put(zip, 0, 4), put(zip, 0, 4);
  put(zip, entries, 8), put(zip, entries, 8), put(zip, directory.size, 8), put(zip, directory.offset, 8);
  return at;
}

void add_zip64_locator(std::string& zip, std::uint64_t zip64_end) {
  put(zip, 0x07064b50, 4), put(zip, 0, 4), put(zip, zip64_end, 8), put(zip, 1, 4);
}

// An archive of stored records, listed as they are.
std::string archive(const std::vector<std::pair<std::string, std::string>>& records) {
  std::string zip;
  std::vector<Listed> listed;
  for (const auto& [name, data] : records) listed.push_back(add_record(zip, name, data));
  add_end(zip, listed.size(), add_directory(zip, listed));
  return zip;
}

fs::path write(const TempDir& dir, const std::string& bytes) {
  const fs::path file = dir.path() / "archive.zip";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  return file;
}

// The scan's refusal, or "" when it passes.
std::string refusal(const fs::path& file) {
  try {
    scan_zip_records(file);
  } catch (const ZipError& e) { return e.what(); }
  return "";
}

TEST(ZipRecords, PassesStoredRecordsEmptyOnesAndOnesWithALocalExtraField) {
  TempDir dir;
  std::string zip;
  std::vector<Listed> listed{add_record(zip, "a", "hello"), add_record(zip, "empty", "")};
  listed.push_back(add_record(zip, "padded", "weights", std::string("\xfe\xca\x04\x00pad!", 8)));  // data after it
  add_end(zip, listed.size(), add_directory(zip, listed));
  const ZipRecords records = scan_zip_records(write(dir, zip));
  EXPECT_EQ(records.records, 3);
  EXPECT_EQ(records.without_checksum, 0);
}

TEST(ZipRecords, ChecksRecordsLargerThanItsReadBufferAfterSmallOnes) {
  TempDir dir;
  const std::string big((3 << 19) + 3, 'w');  // 1.5 MB and 3 bytes: two pieces of the 1 MB buffer
  std::string zip = archive({{"small", "0123456789"}, {"empty", ""}, {"big", big}, {"small2", "x"}});
  EXPECT_EQ(refusal(write(dir, zip)), "");
  zip[zip.find(big) + big.size() - 1] = 'v';  // its last byte, in the second piece
  EXPECT_EQ(refusal(write(dir, zip)), "record 'big' does not match its CRC-32");
}

TEST(ZipRecords, FollowsAZip64DirectoryThatAgreesWithTheZipOne) {
  TempDir dir;
  for (const bool saturated : {false, true}) {
    std::string zip;
    const std::vector<Listed> listed{add_record(zip, "a", "hello"), add_record(zip, "b", "world")};
    const Span directory = add_directory(zip, listed);
    add_zip64_locator(zip, add_zip64_end(zip, listed.size(), directory));
    if (saturated)
      add_end(zip, 0xFFFF, {0xFFFFFFFF, 0xFFFFFFFF});
    else
      add_end(zip, listed.size(), directory);
    EXPECT_EQ(refusal(write(dir, zip)), "") << "saturated: " << saturated;
  }
}

// LibTorch's reader (miniz) takes the zip64 directory whenever a locator precedes the end record:
// a harmless 32-bit directory must not hide another one. miniz looks for the zip64 end record
// right before the locator, then where the locator points; both places are refused.
TEST(ZipRecords, RefusesAZip64DirectoryThatDisagreesWithTheZipOne) {
  TempDir dir;
  for (const bool where_the_locator_points : {false, true}) {
    std::string zip;
    const Listed harmless = add_record(zip, "harmless", "hello");
    Listed hostile = add_record(zip, "hostile", "world");
    hostile.crc ^= 1;
    const Span shown = add_directory(zip, {harmless});
    const Span hidden = add_directory(zip, {harmless, hostile});
    const std::uint64_t zip64_end = add_zip64_end(zip, 2, hidden);
    if (where_the_locator_points) zip += std::string(16, '\0');  // not right before the locator
    add_zip64_locator(zip, zip64_end);
    add_end(zip, 1, shown);
    EXPECT_EQ(refusal(write(dir, zip)), "its zip64 directory disagrees with its zip directory")
        << "where the locator points: " << where_the_locator_points;
  }
}

// 100,000 entries naming one local header would each be read and CRC'd again.
TEST(ZipRecords, RefusesRecordsThatShareBytes) {
  TempDir dir;
  std::string zip;
  const Listed a = add_record(zip, "a", "hello");
  Listed b = a;
  b.name = "b";
  add_end(zip, 2, add_directory(zip, {a, b}));
  EXPECT_EQ(refusal(write(dir, zip)), "records 'a' and 'b' overlap in the file");

  // A record whose bytes hold a whole second record, header and all.
  std::string inner;
  const Listed c = add_record(inner, "c", "inside");
  zip.clear();
  Listed outer = add_record(zip, "outer", "xx" + inner + "yy");
  Listed nested = c;
  nested.local += outer.local + 30 + outer.name.size() + 2;
  add_end(zip, 2, add_directory(zip, {outer, nested}));
  EXPECT_EQ(refusal(write(dir, zip)), "records 'outer' and 'c' overlap in the file");
}

TEST(ZipRecords, RefusesADirectoryInsideARecord) {
  TempDir dir;
  std::string zip;
  Listed a = add_record(zip, "a", "abc");
  a.size += 46 + 1;  // its bytes run on over the directory's one entry
  add_end(zip, 1, add_directory(zip, {a}));
  EXPECT_EQ(refusal(write(dir, zip)), "the zip directory overlaps record 'a'");
}

// The archive names its records: control bytes, line separators and bytes that are not UTF-8
// are escaped, and a long name is cut at 64 bytes, so the message is one readable line.
TEST(ZipRecords, ShowsARecordsNameEscapedOnOneLine) {
  TempDir dir;
  const auto refused_name = [&dir](const std::string& name) {
    std::string zip;
    Listed listed = add_record(zip, name, "data");
    listed.crc ^= 1;
    add_end(zip, 1, add_directory(zip, {listed}));
    return refusal(write(dir, zip));
  };
  EXPECT_EQ(refused_name("a\nb"), "record 'a\\x0ab' does not match its CRC-32");
  EXPECT_EQ(refused_name("\x7f\xff\xc0\xaf\xe2\x80\xa8\xc2\x85\xed\xa0\x80=\xc3\xa9"),
            "record '\\x7f\\xff\\xc0\\xaf\\xe2\\x80\\xa8\\xc2\\x85\\xed\\xa0\\x80=\xc3\xa9' does not match its CRC-32");
  EXPECT_EQ(refused_name(std::string(64, 'x')), "record '" + std::string(64, 'x') + "' does not match its CRC-32");
  EXPECT_EQ(refused_name(std::string(63, 'x') + "\xc3\xa9" + std::string(1000, 'y')),
            "record '" + std::string(63, 'x') + "...' does not match its CRC-32");  // é would pass byte 64
}

}  // namespace zip_records_test
}  // namespace plugtrain::testing
