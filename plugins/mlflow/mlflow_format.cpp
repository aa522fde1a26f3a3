// The MLflow plugin's text rules (mlflow_format.h).
#include "mlflow_format.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

namespace plugtrain::mlflow {

namespace {

bool is_key_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == '-' || c == ' ' || c == ':';
}

std::vector<std::string> path_segments(const std::string& path) {
  std::vector<std::string> segments;
  std::string segment;
  for (char c : path) {
    if (c != '/') {
      segment += c;
      continue;
    }
    segments.push_back(segment);
    segment.clear();
  }
  segments.push_back(segment);
  return segments;
}

}  // namespace

std::string sanitize_key(const std::string& key) {
  // Cut first: the rest only keeps or shortens the length.
  std::string cut = key.substr(0, kMaxKeyLength);
  for (char& c : cut) {
    if (!is_key_character(c)) c = '_';
  }
  // MLflow refuses a key that posixpath.normpath would change (it treats keys as file names).
  std::string out;
  for (const std::string& segment : path_segments(cut)) {
    if (segment.empty()) continue;
    if (!out.empty()) out += '/';
    out += segment == "." ? "_" : segment == ".." ? "__" : segment;
  }
  return out.empty() ? "_" : out;
}

std::string cut_utf8(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back up over continuation bytes (10xxxxxx) so the cut falls before a sequence's first byte.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string metric_value_json(double value) {
  if (std::isnan(value)) return "\"NaN\"";
  if (std::isinf(value)) return value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  return nlohmann::json(value).dump();  // round-trip exact
}

std::string metric_line(const std::string& key, double value, std::int64_t step, std::int64_t time_ms) {
  return "{\"key\":" + json_text(key) + ",\"value\":" + metric_value_json(value) + ",\"step\":" + std::to_string(step) +
         ",\"timestamp\":" + std::to_string(time_ms) + "}";
}

std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string percent_encode(const std::string& text) {
  static const char* const hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string percent_decode(const std::string& text) {
  const auto hex_digit = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_digit(text[i + 1]) && hex_digit(text[i + 2])) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string url_path(const std::string& name) {
  std::string out;
  for (const std::string& segment : path_segments(name)) {
    if (segment.empty() || segment == "." || segment == "..") continue;
    if (!out.empty()) out += '/';
    out += percent_encode(segment);
  }
  return out;
}

std::string random_hex_id() {
  std::random_device device;
  std::mt19937_64 bits((static_cast<std::uint64_t>(device()) << 32) ^ device());
  static const char* const hex = "0123456789abcdef";
  std::string id;
  for (int half = 0; half < 2; ++half) {
    std::uint64_t word = bits() ^ (static_cast<std::uint64_t>(device()) << 32 | device());
    for (int i = 0; i < 16; ++i, word >>= 4) id += hex[word & 15];
  }
  return id;
}

std::int64_t unix_ms_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace plugtrain::mlflow
