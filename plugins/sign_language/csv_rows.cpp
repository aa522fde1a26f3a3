#include "csv_rows.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sign_language {

std::vector<CsvRow> read_csv(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);

  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  bool quoted = false, row_has_text = false;
  int line = 1;
  row.line = 1;
  auto end_field = [&] {
    row.fields.push_back(field);
    field.clear();
  };
  auto end_row = [&] {
    end_field();
    if (row_has_text) rows.push_back(row);
    row = CsvRow{};
    row.line = line;
    row_has_text = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = row_has_text = true;
    } else if (c == ',') {
      end_field();
      row_has_text = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++line;
      end_row();
    } else {
      field += c;
      row_has_text = true;
    }
  }
  if (quoted) throw std::runtime_error(file.string() + ":" + std::to_string(row.line) + ": a quoted field is never closed");
  end_row();
  return rows;
}

}  // namespace sign_language
