// A tiny, fast random generator for per-sample augmentation on loader threads.
//
// Every sample of an epoch gets its own generator, seeded from (run seed, epoch, rank,
// position in the epoch), so the images are identical whatever the number of worker threads
// and whichever thread prepares which batch — and a resumed epoch draws exactly what the
// uninterrupted one drew. SplitMix64 (Steele, Lea & Flood 2014): one add and three
// xor-multiply steps per draw, statistically fine for augmentation parameters.
#pragma once

#include <cmath>
#include <cstdint>

namespace plugtrain::data {

class SampleRng {
 public:
  explicit SampleRng(uint64_t seed) : state_(seed) {}

  // One seed from several numbers: each is mixed in through a full SplitMix64 step, so nearby
  // (epoch, position) pairs give unrelated streams.
  static uint64_t seed_of(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    uint64_t h = mix(a + 0x9E3779B97F4A7C15ull);
    h = mix(h ^ (b + 0xBF58476D1CE4E5B9ull));
    h = mix(h ^ (c + 0x94D049BB133111EBull));
    return mix(h ^ (d + 0x2545F4914F6CDD1Dull));
  }

  uint64_t next() { return mix(state_ += 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n), n >= 1 (the bias of a 64-bit modulo is negligible here).
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  bool chance(double p) { return uniform() < p; }

 private:
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace plugtrain::data
