// MT19937-64 (Matsumoto and Nishimura's 64-bit Mersenne Twister): the same numbers as
// std::mt19937_64, written out so that its state (312 words and a position) can be read
// and restored exactly, which Generator.get_state / set_state need.
#pragma once

#include <cstdint>

namespace kiln {

class Mt19937 {
 public:
  using result_type = uint64_t;
  static constexpr int kWords = 312;

  explicit Mt19937(uint64_t seed = 5489) { this->seed(seed); }
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t{0}; }

  // The reference initialisation (init_genrand64), as std::mt19937_64::seed.
  void seed(uint64_t s) {
    x_[0] = s;
    for (int i = 1; i < kWords; ++i) x_[i] = 6364136223846793005ULL * (x_[i - 1] ^ (x_[i - 1] >> 62)) + i;
    pos_ = kWords;
  }

  uint64_t operator()() {
    if (pos_ >= kWords) twist();
    uint64_t y = x_[pos_++];
    y ^= (y >> 29) & 0x5555555555555555ULL;  // tempering
    y ^= (y << 17) & 0x71D67FFFEDA60000ULL;
    y ^= (y << 37) & 0xFFF7EEE000000000ULL;
    return y ^ (y >> 43);
  }

  // The raw state: words()[0..311] and the position of the next word (0..312).
  const uint64_t* words() const { return x_; }
  int position() const { return pos_; }
  void set(const uint64_t* words, int position) {
    for (int i = 0; i < kWords; ++i) x_[i] = words[i];
    pos_ = position;
  }

 private:
  void twist() {
    constexpr int kShift = 156;
    constexpr uint64_t kUpper = ~uint64_t{0} << 31, kLower = ~kUpper, kMatrix = 0xB5026F5AA96619E9ULL;
    for (int i = 0; i < kWords; ++i) {
      const uint64_t y = (x_[i] & kUpper) | (x_[(i + 1) % kWords] & kLower);
      x_[i] = x_[(i + kShift) % kWords] ^ (y >> 1) ^ ((y & 1) ? kMatrix : 0);
    }
    pos_ = 0;
  }

  uint64_t x_[kWords];
  int pos_;
};

}  // namespace kiln
