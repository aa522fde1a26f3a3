#include "readers/tar_archive.h"

#include <array>
#include <fstream>
#include <memory>

#include <archive.h>
#include <archive_entry.h>

#include "data/data_error.h"

namespace plugtrain::data {

namespace {

struct ArchiveCloser {
  void operator()(archive* a) const { archive_read_free(a); }
};

std::string reason(archive* a) {
  const char* s = archive_error_string(a);
  return s ? s : "unknown libarchive error";
}

}  // namespace

std::map<std::string, std::vector<uint8_t>> read_archive_members(const std::filesystem::path& path,
                                                                 const std::function<bool(const std::string&)>& wanted,
                                                                 uint64_t max_member_bytes) {
  std::unique_ptr<archive, ArchiveCloser> a(archive_read_new());
  if (!a) throw DataError(path.string() + ": cannot allocate an archive reader");
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_gnutar(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 20) != ARCHIVE_OK)
    throw DataError(path.string() + ": cannot open archive: " + reason(a.get()));
  std::map<std::string, std::vector<uint8_t>> members;
  archive_entry* entry = nullptr;
  for (;;) {
    const int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
      throw DataError(path.string() + ": corrupt archive: " + reason(a.get()));
    const char* name = archive_entry_pathname(entry);
    if (!name || archive_entry_filetype(entry) != AE_IFREG || !wanted(name)) continue;
    const la_int64_t size = archive_entry_size(entry);
    if (size < 0 || uint64_t(size) > max_member_bytes)
      throw DataError(path.string() + ": member " + name + " claims " + std::to_string(size) + " bytes");
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    size_t done = 0;
    while (done < bytes.size()) {
      const la_ssize_t n = archive_read_data(a.get(), bytes.data() + done, bytes.size() - done);
      if (n < 0) throw DataError(path.string() + ": corrupt archive member " + name + ": " + reason(a.get()));
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    if (done != bytes.size())
      throw DataError(path.string() + ": archive member " + std::string(name) + " is truncated (" +
                      std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes)");
    members[name] = std::move(bytes);
  }
  return members;
}

bool looks_like_archive(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::array<unsigned char, 512> head{};
  in.read(reinterpret_cast<char*>(head.data()), head.size());
  const auto n = in.gcount();
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return true;                   // gzip
  if (n >= 3 && head[0] == 'B' && head[1] == 'Z' && head[2] == 'h') return true;  // bzip2
  if (n >= 6 && head[0] == 0xfd && head[1] == '7' && head[2] == 'z') return true;  // xz
  return n >= 262 && std::string(reinterpret_cast<char*>(head.data()) + 257, 5) == "ustar";  // tar
}

}  // namespace plugtrain::data
