#include "config/toml_text.h"

#include <sstream>
#include <type_traits>

namespace plugtrain {

std::string toml_text(const OptionValue& value) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        std::ostringstream out;
        if constexpr (std::is_same_v<T, bool>) {
          out << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<T, std::string>) {
          out << '"' << x << '"';
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<double>>) {
          out << "[";
          for (std::size_t i = 0; i < x.size(); ++i) out << (i ? ", " : "") << x[i];
          out << "]";
        } else {
          out << x;
        }
        return out.str();
      },
      value);
}

}  // namespace plugtrain
