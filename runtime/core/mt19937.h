// MT19937 (Matsumoto and Nishimura's 32-bit Mersenne Twister) exactly as PyTorch's CPU
// generator runs it (ATen's mt19937_engine): seeded with init_genrand on the low 32 bits of
// the seed, 624 state words, and torch's bookkeeping (`left` draws before the next twist,
// `next` the index of the next word), so that a seed gives torch's numbers and a state
// saved by torch.get_rng_state() can be loaded as it is. The numbers are those of
// std::mt19937 seeded with the same 32-bit value.
#pragma once

#include <cstdint>

namespace kiln {

class Mt19937 {
 public:
  using result_type = uint32_t;
  static constexpr int kWords = 624;  // N
  static constexpr int kShift = 397;  // M

  explicit Mt19937(uint64_t seed = 5489) { this->seed(seed); }
  static constexpr uint32_t min() { return 0; }
  static constexpr uint32_t max() { return ~uint32_t{0}; }

  // init_genrand(seed & 0xffffffff); the full 64-bit seed is kept for initial_seed().
  void seed(uint64_t s) {
    seed_ = s;
    x_[0] = static_cast<uint32_t>(s);
    for (uint32_t i = 1; i < kWords; ++i) x_[i] = 1812433253u * (x_[i - 1] ^ (x_[i - 1] >> 30)) + i;
    left_ = 1;  // the first draw twists
    next_ = 0;
  }

  uint32_t operator()() {
    if (--left_ == 0) twist();
    uint32_t y = x_[next_++];
    y ^= y >> 11;  // tempering
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }

  // The raw state, in torch's terms (its get_rng_state() layout stores exactly these).
  uint64_t initial_seed() const { return seed_; }
  const uint32_t* words() const { return x_; }
  int left() const { return left_; }
  uint32_t next() const { return next_; }
  // torch's mt19937_engine::is_valid(): 0 < left <= 624, next <= 624.
  static bool valid(int left, uint32_t next) { return left > 0 && left <= kWords && next <= kWords; }
  void set(uint64_t seed, const uint32_t* words, int left, uint32_t next) {
    seed_ = seed;
    for (int i = 0; i < kWords; ++i) x_[i] = words[i];
    left_ = left;
    next_ = next;
  }

 private:
  // Regenerates all 624 words: x[i] from x[i], x[i+1] and x[i+397] (indices mod 624, the
  // wrapped ones already regenerated), in three runs so no index needs a modulo.
  void twist() {
    auto mix = [](uint32_t u, uint32_t v) {
      const uint32_t y = (u & 0x80000000u) | (v & 0x7fffffffu);
      return (y >> 1) ^ ((v & 1) ? 0x9908b0dfu : 0u);
    };
    int i = 0;
    for (; i < kWords - kShift; ++i) x_[i] = x_[i + kShift] ^ mix(x_[i], x_[i + 1]);
    for (; i < kWords - 1; ++i) x_[i] = x_[i + kShift - kWords] ^ mix(x_[i], x_[i + 1]);
    x_[kWords - 1] = x_[kShift - 1] ^ mix(x_[kWords - 1], x_[0]);
    left_ = kWords;
    next_ = 0;
  }

  uint64_t seed_;
  uint32_t x_[kWords];
  int left_;       // draws left before the next twist, plus one (torch's convention)
  uint32_t next_;  // the index of the next word to temper
};

}  // namespace kiln
