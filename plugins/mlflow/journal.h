// The MLflow plugin's queue: journal.jsonl in <run folder>/mlflow/, one metric per line exactly
// as log-batch takes it. The training thread appends; the sender reads on from the offset the
// server acknowledged (the file `sent`). So memory stays small however long the server is away,
// and what a process could not send is still there for the next one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

namespace plugtrain::mlflow {

// The training thread's end of the journal.
class JournalWriter {
 public:
  JournalWriter() = default;
  ~JournalWriter() { close(); }
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Opens for appending. A last line without its newline (a process killed while writing it)
  // is cut off first, so the next line does not run into it. False when it cannot.
  bool open(const std::filesystem::path& path);
  // One line (no newline) into the stdio buffer; flush() hands the lines to the system.
  bool append(const std::string& line);
  bool flush();
  void close();

 private:
  std::FILE* file_ = nullptr;
};

// Metrics read from the journal for one log-batch.
struct JournalBatch {
  std::string metrics;           // the lines, comma-separated
  std::size_t count = 0;         // how many
  std::uint64_t end_offset = 0;  // the journal offset after the last line read
};

// Up to `max_count` whole lines and about `max_bytes` from `offset` on. A line that is not a
// JSON object (a damaged file) is passed over.
JournalBatch read_journal_batch(const std::filesystem::path& path, std::uint64_t offset, std::size_t max_count,
                                std::size_t max_bytes);

// How many metric lines follow `offset`.
std::size_t count_journal_lines(const std::filesystem::path& path, std::uint64_t offset);

// The highest step of each key in the journal: a resumed run logs again the steps a killed
// attempt logged after its checkpoint, and those are already here.
std::map<std::string, std::int64_t> highest_steps(const std::filesystem::path& path);

// The journal's size in bytes; 0 when it is missing.
std::uint64_t journal_size(const std::filesystem::path& path);

}  // namespace plugtrain::mlflow
