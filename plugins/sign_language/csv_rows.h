// RFC 4180 CSV: fields separated by commas, a field in double quotes may hold commas, line
// breaks and "" for a quote. A UTF-8 byte-order mark before the first field is dropped (the CE-CSL
// label files are written by spreadsheet tools). Small enough not to need a library.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sign_language {

struct CsvRow {
  int line = 0;  // where the row starts in the file, 1-based, for messages
  std::vector<std::string> fields;
};

// Every row of the file, the header first; blank lines are skipped. Throws std::runtime_error
// naming the file for one that cannot be read or a quote left open.
std::vector<CsvRow> read_csv(const std::filesystem::path& file);

}  // namespace sign_language
