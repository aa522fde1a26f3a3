// The MLflow plugin's text rules: keys as MLflow accepts them, values as its JSON wants them,
// artifact paths for a URL, and the JSON this plugin writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace plugtrain::mlflow {

// MLflow's limits (mlflow/utils/validation.py).
constexpr std::size_t kMaxKeyLength = 250;
constexpr std::size_t kMaxParamValueLength = 6000;
constexpr std::size_t kMaxTagValueLength = 8000;

// A metric, param or tag key MLflow accepts: characters outside [A-Za-z0-9_./- :] become "_",
// empty, "." and ".." path segments go ("//" collapsed, no leading or trailing "/"), at most
// 250 characters; "_" for a key with nothing left.
std::string sanitize_key(const std::string& key);

// `text` cut to at most `max_bytes` without splitting a UTF-8 sequence.
std::string cut_utf8(const std::string& text, std::size_t max_bytes);

// One journal line (no newline): the metric exactly as log-batch takes it, so the same bytes are
// sent on every retry and the server recognises them.
std::string metric_line(const std::string& key, double value, std::int64_t step, std::int64_t time_ms);

// `value` as MLflow's JSON wants it: a number, or "NaN", "Infinity", "-Infinity" as strings
// (nlohmann writes NaN and infinities as null, which the server refuses).
std::string metric_value_json(double value);

// JSON text that never throws on invalid UTF-8 (replaced by U+FFFD).
std::string json_text(const nlohmann::json& value);

// Every byte outside A-Z a-z 0-9 - . _ ~ as %XX.
std::string percent_encode(const std::string& text);

// %XX escapes back to their bytes; a "%" without two hex digits stays as it is.
std::string percent_decode(const std::string& text);

// `name` (a path relative to the run folder) for a URL: each segment percent-encoded, empty,
// "." and ".." segments left out, so an upload stays inside the run. "" when nothing is left.
std::string url_path(const std::string& name);

// A random 128-bit id in hex (32 characters).
std::string random_hex_id();

// Milliseconds since the Unix epoch, now.
std::int64_t unix_ms_now();

}  // namespace plugtrain::mlflow
