// Random number generation: a CPU Generator (kiln.Generator in Python) is a Mersenne
// Twister behind a mutex. Ops take `Generator*` (nullptr: the process-wide default
// generator, which kiln.manual_seed seeds, as torch's default CPU generator).
// Generators are reference counted, so a Python object and a running op can share one.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/core/intrusive_ptr.h"
#include "runtime/core/mt19937.h"

namespace kiln {

class Generator : public RefCounted {
 public:
  // PyTorch's default CPU seed, so a fresh process draws the same numbers every run.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;
  // get_state(): [initial seed, position, 312 state words], each a 64-bit pattern.
  static constexpr int64_t kStateSize = 2 + Mt19937::kWords;

  explicit Generator(uint64_t seed = kDefaultSeed) : engine_(seed), seed_(seed) {}

  void manual_seed(uint64_t seed);
  // Seeds with a fresh non-deterministic number (std::random_device) and returns it.
  uint64_t seed();
  uint64_t initial_seed() const;
  std::vector<int64_t> get_state() const;
  // Throws (kiln::Error) unless `state` came from get_state(): the size and position are checked.
  void set_state(const int64_t* state, int64_t size);

  // Holds the lock while `f(engine)` draws numbers, so concurrent draws are ordered.
  template <typename F>
  void draw(F f) {
    std::lock_guard<std::mutex> lock(mutex_);
    f(engine_);
  }

 private:
  mutable std::mutex mutex_;
  Mt19937 engine_;
  uint64_t seed_;
};

Generator& default_generator();
// The default generator as a shared handle (it lives as long as the process).
const Ref<Generator>& default_generator_ref();
inline void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace kiln
