#include "runtime/core/generator.h"

#include <random>

#include "runtime/core/error.h"

namespace kiln {

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  engine_.seed(seed);
  seed_ = seed;
}

uint64_t Generator::seed() {
  std::random_device device;  // the OS's entropy source (/dev/urandom)
  const uint64_t s = (static_cast<uint64_t>(device()) << 32) ^ device();
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return seed_;
}

std::vector<int64_t> Generator::get_state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int64_t> state(kStateSize);
  state[0] = static_cast<int64_t>(seed_);
  state[1] = engine_.position();
  for (int i = 0; i < Mt19937::kWords; ++i) state[2 + i] = static_cast<int64_t>(engine_.words()[i]);
  return state;
}

void Generator::set_state(const int64_t* state, int64_t size) {
  KILN_CHECK(size == kStateSize, "set_state(): RNG state is wrong size: expected ", kStateSize,
             " int64 values (from get_state()), got ", size);
  // The position indexes the state words: anything else would read past them.
  KILN_CHECK(state[1] >= 0 && state[1] <= Mt19937::kWords, "set_state(): invalid RNG state (position ", state[1],
             " is not in [0, ", Mt19937::kWords, "])");
  uint64_t words[Mt19937::kWords];
  for (int i = 0; i < Mt19937::kWords; ++i) words[i] = static_cast<uint64_t>(state[2 + i]);
  std::lock_guard<std::mutex> lock(mutex_);
  engine_.set(words, static_cast<int>(state[1]));
  seed_ = static_cast<uint64_t>(state[0]);
}

const Ref<Generator>& default_generator_ref() {
  // Never destroyed: ops may still draw from it while static destructors run at exit.
  static const auto* g = new Ref<Generator>(Ref<Generator>::make(Generator::kDefaultSeed));
  return *g;
}

Generator& default_generator() { return *default_generator_ref(); }

}  // namespace kiln
