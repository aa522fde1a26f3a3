#include "readers/idx_reader.h"

#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "data/data_error.h"

namespace plugtrain::data {
namespace {

namespace fs = std::filesystem;

constexpr int kUnsignedByte = 0x08;
constexpr int kMaxDims = 8;  // MNIST needs 3; anything far beyond is a corrupt header

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

const char* type_name(int type) {
  switch (type) {
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return nullptr;
  }
}

// Reads up to n bytes (gzread takes an unsigned int length, so large reads go in chunks).
// Returns how many were read; stops early at the end of the file.
std::uint64_t read_some(gzFile file, const fs::path& path, void* dst, std::uint64_t n) {
  auto* out = static_cast<unsigned char*>(dst);
  std::uint64_t done = 0;
  while (done < n) {
    const auto chunk = static_cast<unsigned>(std::min<std::uint64_t>(n - done, 1u << 30));
    const int got = gzread(file, out + done, chunk);
    if (got < 0) {
      int errnum = 0;
      const char* msg = gzerror(file, &errnum);
      throw DataError(path.string() + ": read error: " + (msg ? msg : "unknown zlib error"));
    }
    if (got == 0) break;
    done += static_cast<std::uint64_t>(got);
  }
  return done;
}

std::uint32_t big_endian(const unsigned char* b) {
  return (std::uint32_t(b[0]) << 24) | (std::uint32_t(b[1]) << 16) | (std::uint32_t(b[2]) << 8) |
         std::uint32_t(b[3]);
}

}  // namespace

at::Tensor read_idx(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw DataError(path.string() + ": no such file");

  // gzopen reads gzip and plain files alike (plain data passes through unchanged).
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) throw DataError(path.string() + ": cannot open");
  gzbuffer(file.get(), 1u << 17);

  std::array<unsigned char, 4> head{};
  const auto got = read_some(file.get(), path, head.data(), head.size());
  const std::uint32_t magic = got == 4 ? big_endian(head.data()) : 0;
  const int type = head[2];
  const int ndims = head[3];
  if (got < 4 || head[0] != 0 || head[1] != 0 || ndims == 0 || ndims > kMaxDims ||
      (type != kUnsignedByte && type_name(type) == nullptr)) {
    throw DataError(path.string() + ": not an IDX file (magic " +
                    (got < 4 ? std::string("missing: only ") + std::to_string(got) + " bytes" : hex(magic)) +
                    ")");
  }
  if (type != kUnsignedByte) {
    throw DataError(path.string() + ": unsupported IDX element type 0x" + hex(type).substr(8) + " (" +
                    type_name(type) + "); only unsigned byte (0x08) is supported");
  }

  std::vector<unsigned char> dim_bytes(4 * static_cast<std::size_t>(ndims));
  if (read_some(file.get(), path, dim_bytes.data(), dim_bytes.size()) != dim_bytes.size()) {
    throw DataError(path.string() + ": truncated: file ends inside the header (" + std::to_string(ndims) +
                    " dims promised)");
  }
  std::vector<int64_t> sizes(ndims);
  std::uint64_t total = 1, nonzero = 1;  // LibTorch's strides multiply the nonzero dims even when one is 0
  for (int i = 0; i < ndims; ++i) {
    sizes[i] = big_endian(dim_bytes.data() + 4 * i);
    const auto s = static_cast<std::uint64_t>(sizes[i]);
    if (s != 0 && nonzero > (std::uint64_t(1) << 62) / s)
      throw DataError(path.string() + ": not an IDX file (dims overflow)");
    total *= s;
    if (s != 0) nonzero *= s;
  }

  // Nothing is allocated for data the file cannot hold (a damaged header can promise exabytes):
  // a plain file holds what follows its header, a gzip one at most deflate's 1032:1 of itself.
  const std::uint64_t file_bytes = fs::file_size(path, ec);
  const std::uint64_t header = 4 + 4 * std::uint64_t(ndims);
  const bool plain = gzdirect(file.get()) == 1;
  const std::uint64_t can_hold = plain ? (file_bytes > header ? file_bytes - header : 0) : file_bytes * 1032 + 1024;
  if (total > can_hold)
    throw DataError(path.string() + ": truncated: header promises " + std::to_string(total) + " bytes of data, file " +
                    (plain ? "has " + std::to_string(can_hold) : "(gzip, " + std::to_string(file_bytes) +
                                                                   " bytes) cannot hold that many"));
  at::Tensor out = at::empty(sizes, at::TensorOptions().dtype(at::kByte));
  const auto have = read_some(file.get(), path, out.data_ptr(), total);
  if (have < total) {
    throw DataError(path.string() + ": truncated: header promises " + std::to_string(total) +
                    " bytes of data, file has " + std::to_string(have));
  }
  return out;
}

}  // namespace plugtrain::data
