// Random number generation: one process-wide CPU generator, seeded by
// kiln.manual_seed (kiln::manual_seed in C++), as torch's default generator.
#pragma once

#include <cstdint>
#include <mutex>
#include <random>

namespace kiln {

class Generator {
 public:
  explicit Generator(uint64_t seed) : engine_(seed), seed_(seed) {}
  void manual_seed(uint64_t seed) {
    std::lock_guard<std::mutex> lock(mutex_);
    engine_.seed(seed);
    seed_ = seed;
  }
  uint64_t initial_seed() const { return seed_; }
  // Holds the lock while `f(engine)` draws numbers, so concurrent draws are ordered.
  template <typename F>
  void draw(F f) {
    std::lock_guard<std::mutex> lock(mutex_);
    f(engine_);
  }

 private:
  std::mutex mutex_;
  std::mt19937_64 engine_;
  uint64_t seed_;
};

Generator& default_generator();
inline void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace kiln
