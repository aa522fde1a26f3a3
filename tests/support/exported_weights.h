// A run's weights as `plugtrain export` writes them (name -> tensor), and the check that two
// runs ended with the same weights: how the tests prove that a strategy (dp, ddp) computes what
// one process computes. Header-only; needs PLUGTRAIN_EXE.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <gtest/gtest.h>
#include <torch/serialize.h>

#include "support/run_process.h"

namespace plugtrain::testing {

// Exports `checkpoint` to `out` with the real executable and reads it back.
inline std::map<std::string, at::Tensor> exported_weights(const std::filesystem::path& checkpoint,
                                                          const std::filesystem::path& out) {
  const ProcessResult r =
      run_process(plugtrain_command("export " + shell_quote(checkpoint.string()) + " " + shell_quote(out.string())));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const std::string bytes = slurp(out);
  const c10::IValue value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  std::map<std::string, at::Tensor> weights;
  for (const auto& item : value.toGenericDict()) weights[item.key().toStringRef()] = item.value().toTensor();
  return weights;
}

// Every tensor of `a` is in `b` and equal within float rounding of another order of sums.
inline void expect_same_weights(const std::map<std::string, at::Tensor>& a, const std::map<std::string, at::Tensor>& b,
                                const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_FALSE(a.empty()) << what;
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << what << ": " << name;
    EXPECT_TRUE(at::allclose(t, b.at(name), 1e-4, 1e-5))
        << what << ": " << name << " differs by " << (t - b.at(name)).abs().max().item<double>();
  }
}

}  // namespace plugtrain::testing
