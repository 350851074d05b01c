// Random number generation: a CPU Generator (kiln.Generator in Python) is PyTorch's CPU
// generator, behind a mutex: torch's 32-bit Mersenne Twister (mt19937.h) plus the second
// Box-Muller value that normal draws keep for the next draw (one for double, one for float).
// A seed gives the numbers torch gives, and get_state()/set_state() use torch's byte layout.
// Ops take `Generator*` (nullptr: the process-wide default generator, which
// kiln.manual_seed seeds, as torch's default CPU generator; like torch's, it starts from a
// non-deterministic seed). Generators are reference
// counted, so a Python object and a running op can share one.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/core/intrusive_ptr.h"
#include "runtime/core/mt19937.h"

namespace kiln {

// What a kernel draws from while it holds the generator's lock: torch's CPUGeneratorImpl
// (random(), random64() and the cached normal samples), so kernels can be written as torch's.
struct RandomEngine {
  Mt19937 mt;
  std::optional<double> next_double_normal;  // the sin half of the last double Box-Muller pair
  std::optional<float> next_float_normal;    // (torch never fills this one on the CPU, but keeps it in its state)

  uint32_t random() { return mt(); }
  // Two draws, the first one the high half (torch's random64()).
  uint64_t random64() {
    const uint64_t hi = mt();
    return (hi << 32) | mt();
  }
};

class Generator : public RefCounted {
 public:
  // The seed of a new generator (torch.Generator()'s). The default generator is seeded
  // non-deterministically when the process starts instead, as torch's.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;
  // get_state(): the 5056 bytes of torch's CPUGeneratorImplState (see generator.cc).
  static constexpr int64_t kStateSize = 5056;

  explicit Generator(uint64_t seed = kDefaultSeed) { engine_.mt.seed(seed); }

  // Seeds the engine and forgets the cached normal values (as torch).
  void manual_seed(uint64_t seed);
  // Seeds with a fresh non-deterministic number (std::random_device) and returns it.
  uint64_t seed();
  uint64_t initial_seed() const;
  // torch.Generator.get_state()'s bytes, one per element (values 0..255).
  std::vector<int64_t> get_state() const;
  // Throws (kiln::Error) unless `state` is such a byte sequence with a valid engine state
  // (torch's checks: the size, seeded, 0 < left <= 624, next <= 624).
  void set_state(const int64_t* state, int64_t size);

  // Holds the lock while `f(engine)` draws numbers, so concurrent draws are ordered.
  template <typename F>
  void draw(F f) {
    std::lock_guard<std::mutex> lock(mutex_);
    f(engine_);
  }

 private:
  mutable std::mutex mutex_;
  RandomEngine engine_;
};

Generator& default_generator();
// The default generator as a shared handle (it lives as long as the process).
const Ref<Generator>& default_generator_ref();
inline void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace kiln
