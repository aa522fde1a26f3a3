// The MLflow plugin's journal (journal.h).
#include "journal.h"

#include <cstdlib>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

namespace plugtrain::mlflow {

namespace {

// The length of the journal up to and including its last newline.
std::uint64_t whole_lines_length(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return 0;
  in.seekg(0, std::ios::end);
  std::int64_t end = in.tellg();
  char c = 0;
  while (end > 0) {
    in.seekg(end - 1);
    if (!in.get(c) || c == '\n') break;
    --end;
  }
  return end > 0 ? static_cast<std::uint64_t>(end) : 0;
}

bool looks_like_metric(const std::string& line) {
  return line.size() >= 2 && line.front() == '{' && line.back() == '}';
}

// A line's key and step. Our own lines (sanitized keys: nothing escaped) are read without a
// JSON parser, so a long run's journal is scanned quickly when it resumes.
bool key_and_step(const std::string& line, std::string& key, std::int64_t& step) {
  static const std::string key_start = "{\"key\":\"", key_end = "\",\"value\":", step_start = ",\"step\":";
  const std::size_t end = line.find(key_end);
  const std::size_t at = line.find(step_start, end == std::string::npos ? 0 : end);
  if (line.compare(0, key_start.size(), key_start) == 0 && end != std::string::npos && at != std::string::npos &&
      line.find('\\') == std::string::npos) {
    key.assign(line, key_start.size(), end - key_start.size());
    char* stop = nullptr;
    step = std::strtoll(line.c_str() + at + step_start.size(), &stop, 10);
    if (stop != line.c_str() + at + step_start.size()) return true;
  }
  const nlohmann::json metric = nlohmann::json::parse(line, nullptr, false);
  if (!metric.is_object() || !metric.contains("key") || !metric.contains("step")) return false;
  if (!metric["key"].is_string() || !metric["step"].is_number_integer()) return false;
  key = metric["key"].get<std::string>();
  step = metric["step"].get<std::int64_t>();
  return true;
}

}  // namespace

bool JournalWriter::open(const std::filesystem::path& path) {
  close();
  std::error_code error;
  if (std::filesystem::exists(path, error)) {
    const std::uint64_t whole = whole_lines_length(path);
    if (whole != std::filesystem::file_size(path, error)) std::filesystem::resize_file(path, whole, error);
  }
  file_ = std::fopen(path.c_str(), "ab");
  return file_ != nullptr;
}

bool JournalWriter::append(const std::string& line) {
  if (file_ == nullptr) return false;
  const std::string with_newline = line + '\n';
  return std::fwrite(with_newline.data(), 1, with_newline.size(), file_) == with_newline.size();
}

// fflush, not fsync: the lines survive a killed process, and the training thread never waits
// for a disk.
bool JournalWriter::flush() { return file_ != nullptr && std::fflush(file_) == 0; }

void JournalWriter::close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

JournalBatch read_journal_batch(const std::filesystem::path& path, std::uint64_t offset, std::size_t max_count,
                                std::size_t max_bytes) {
  JournalBatch batch;
  batch.end_offset = offset;
  std::ifstream in(path, std::ios::binary);
  if (!in || !in.seekg(static_cast<std::streamoff>(offset))) return batch;
  std::string line;
  while (batch.count < max_count && batch.metrics.size() < max_bytes) {
    if (!std::getline(in, line) || in.eof()) break;  // no newline yet: the writer is not done with it
    batch.end_offset += line.size() + 1;
    if (!looks_like_metric(line)) continue;
    if (batch.count > 0) batch.metrics += ',';
    batch.metrics += line;
    ++batch.count;
  }
  return batch;
}

std::size_t count_journal_lines(const std::filesystem::path& path, std::uint64_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in || !in.seekg(static_cast<std::streamoff>(offset))) return 0;
  std::size_t count = 0;
  std::string line;
  while (std::getline(in, line) && !in.eof()) {
    if (looks_like_metric(line)) ++count;
  }
  return count;
}

std::map<std::string, std::int64_t> highest_steps(const std::filesystem::path& path) {
  std::map<std::string, std::int64_t> highest;
  std::ifstream in(path, std::ios::binary);
  std::string line, key;
  std::int64_t step = 0;
  while (std::getline(in, line)) {
    if (!key_and_step(line, key, step)) continue;
    auto it = highest.find(key);
    if (it == highest.end()) {
      highest.emplace(key, step);
    } else if (it->second < step) {
      it->second = step;
    }
  }
  return highest;
}

std::uint64_t journal_size(const std::filesystem::path& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<std::uint64_t>(size);
}

}  // namespace plugtrain::mlflow
