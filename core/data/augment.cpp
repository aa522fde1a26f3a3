#include "data/augment.h"

#include <string>

#include <ATen/ATen.h>

#include "data/data_error.h"

namespace plugtrain::data {

at::Tensor augment_batch(const at::Tensor& batch, const Augmentation& aug, at::Generator& gen) {
  if (!aug.any()) return batch;
  if (batch.dim() != 4) throw DataError("augment_batch: expected an N,C,H,W batch, got " +
                                        std::to_string(batch.dim()) + " dims");
  const int64_t n = batch.size(0), c = batch.size(1), h = batch.size(2), w = batch.size(3);
  const auto cpu_long = at::TensorOptions().dtype(at::kLong);
  const auto on_batch = at::TensorOptions().dtype(at::kLong).device(batch.device());
  at::Tensor out = batch;

  if (aug.random_crop) {
    const int64_t p = aug.crop_padding;
    if (p < 0) throw DataError("augment_batch: crop_padding must be >= 0");
    // Offsets into the padded image: 0..2p, i.e. a shift of -p..p.
    const at::Tensor dy = at::randint(2 * p + 1, {n}, gen, cpu_long).to(batch.device());
    const at::Tensor dx = at::randint(2 * p + 1, {n}, gen, cpu_long).to(batch.device());
    if (p > 0) {
      const at::Tensor padded = at::constant_pad_nd(batch, {p, p, p, p}, 0);  // N,C,H+2p,W+2p
      // Rows: index (N,1,H,1) expanded over C and the padded width, gathered along dim 2.
      const at::Tensor rows = (dy.view({n, 1}) + at::arange(h, on_batch).view({1, h})).view({n, 1, h, 1});
      const at::Tensor cut_rows = padded.gather(2, rows.expand({n, c, h, w + 2 * p}));
      // Columns: index (N,1,1,W) expanded over C and H, gathered along dim 3.
      const at::Tensor cols = (dx.view({n, 1}) + at::arange(w, on_batch).view({1, w})).view({n, 1, 1, w});
      out = cut_rows.gather(3, cols.expand({n, c, h, w}));
    }
  }

  if (aug.horizontal_flip) {
    const at::Tensor coin = at::randint(2, {n}, gen, cpu_long).to(batch.device());
    const at::Tensor flip = coin.to(at::kBool).view({n, 1, 1, 1});
    out = at::where(flip, out.flip({3}), out);
  }
  return out;
}

}  // namespace plugtrain::data
