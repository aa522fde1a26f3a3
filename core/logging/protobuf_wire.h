// The protobuf wire format, just what TensorBoard's Event, Summary and plugin messages need.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace plugtrain::wire {

inline void varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += char((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += char(v);
}

inline void tag(std::string& out, int field, int wire_type) { varint(out, (std::uint64_t(field) << 3) | wire_type); }

inline void field_double(std::string& out, int field, double v) {
  tag(out, field, 1);
  char b[8];
  std::memcpy(b, &v, 8);  // little-endian, as protobuf
  out.append(b, 8);
}

inline void field_float(std::string& out, int field, float v) {
  tag(out, field, 5);
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

inline void field_int64(std::string& out, int field, std::int64_t v) {
  tag(out, field, 0);
  varint(out, std::uint64_t(v));
}

inline void field_bytes(std::string& out, int field, const std::string& v) {
  tag(out, field, 2);
  varint(out, v.size());
  out += v;
}

}  // namespace plugtrain::wire
