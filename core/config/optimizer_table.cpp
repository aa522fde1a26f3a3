#include "config/optimizer_table.h"

namespace plugtrain {

const std::vector<OptimizerRow>& optimizer_table() {
  static const std::vector<OptimizerRow> rows = {
      {OptimizerName::sgd, "stochastic gradient descent with momentum and Nesterov momentum", "aten::_fused_sgd_",
       {"momentum", "nesterov"}},
      {OptimizerName::adam, "Adam (L2 weight decay)", "aten::_fused_adam_", {"betas", "eps"}},
      {OptimizerName::adamw, "AdamW (decoupled weight decay)", "aten::_fused_adamw_", {"betas", "eps"}},
      {OptimizerName::rmsprop, "RMSprop", nullptr, {"alpha", "eps", "momentum"}},
      {OptimizerName::lion, "Lion (sign of the interpolated momentum; decoupled weight decay)", nullptr, {"betas"}},
  };
  return rows;
}

const OptimizerRow& optimizer_row(OptimizerName name) {
  for (const OptimizerRow& row : optimizer_table())
    if (row.name == name) return row;
  return optimizer_table().front();  // unreachable: every OptimizerName has its row
}

std::vector<std::string> optimizers_with_fused_kernel() {
  std::vector<std::string> names;
  for (const OptimizerRow& row : optimizer_table())
    if (row.fused_kernel) names.emplace_back(word_of(row.name));
  return names;
}

bool may_be_replayable(OptimizerName name, std::optional<OptimizerImpl> impl) {
  return optimizer_row(name).fused_kernel && (!impl || *impl == OptimizerImpl::fused);
}

const char* not_replayable_reason() {
  return "the optimizer is not in its fused form (optim.impl \"fused\" or \"auto\" with sgd, adam or adamw): "
         "the other forms pass host numbers to their kernels, which a replay would repeat unchanged";
}

std::string optimizer_docs_table() {
  std::string out =
      "| `optim.name` | algorithm | `optim.impl` forms | replayed from a graph | its keys |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const OptimizerRow& row : optimizer_table()) {
    out += std::string("| `") + word_of(row.name) + "` | " + row.algorithm + " | ";
    out += row.fused_kernel ? std::string("fused (`") + row.fused_kernel + "`), foreach, loop" : "foreach, loop";
    out += row.fused_kernel ? " | in the fused form | " : " | no | ";
    std::string keys;
    for (const char* key : row.keys) keys += std::string(keys.empty() ? "" : ", ") + "`optim." + key + "`";
    out += keys + " |\n";
  }
  return out;
}

}  // namespace plugtrain
