#include "runtime/core/generator.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>

#include "runtime/core/error.h"

namespace kiln {
namespace {

// torch's CPUGeneratorImplState, the bytes torch.get_rng_state() returns (x86-64 layout:
// little-endian, natural alignment, padding zeroed). The engine's 32-bit words are stored
// widened to 64 bits, and of the legacy normal fields only normal_y / normal_is_valid are used
// (the cached double normal); the cached float normal follows the legacy part.
struct TorchLegacyState {  // THGeneratorState, 5048 bytes with its tail padding
  uint64_t the_initial_seed;
  int32_t left;
  int32_t seeded;
  uint64_t next;
  uint64_t state[Mt19937::kWords];
  double normal_x, normal_y, normal_rho;
  int32_t normal_is_valid;
};
struct TorchState {
  TorchLegacyState legacy;
  float next_float_normal_sample;
  bool is_next_float_normal_sample_valid;
};
static_assert(sizeof(TorchState) == Generator::kStateSize, "torch's CPU generator state is 5056 bytes");
static_assert(offsetof(TorchState, next_float_normal_sample) == 5048, "torch's CPU generator state layout");

}  // namespace

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  engine_.mt.seed(seed);
  engine_.next_double_normal.reset();
  engine_.next_float_normal.reset();
}

uint64_t Generator::seed() {
  std::random_device device;  // the OS's entropy source (/dev/urandom)
  const uint64_t s = (static_cast<uint64_t>(device()) << 32) ^ device();
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return engine_.mt.initial_seed();
}

std::vector<int64_t> Generator::get_state() const {
  TorchState s;
  std::memset(&s, 0, sizeof s);  // padding included, as torch's value-initialised struct
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Mt19937& mt = engine_.mt;
    s.legacy.the_initial_seed = mt.initial_seed();
    s.legacy.left = mt.left();
    s.legacy.seeded = 1;
    s.legacy.next = mt.next();
    for (int i = 0; i < Mt19937::kWords; ++i) s.legacy.state[i] = mt.words()[i];
    if (engine_.next_double_normal) {
      s.legacy.normal_is_valid = 1;
      s.legacy.normal_y = *engine_.next_double_normal;
    }
    if (engine_.next_float_normal) {
      s.is_next_float_normal_sample_valid = true;
      s.next_float_normal_sample = *engine_.next_float_normal;
    }
  }
  unsigned char bytes[sizeof s];
  std::memcpy(bytes, &s, sizeof s);
  return std::vector<int64_t>(bytes, bytes + sizeof s);
}

void Generator::set_state(const int64_t* state, int64_t size) {
  // torch also takes the legacy state (no cached float normal), 5048 bytes.
  constexpr int64_t kLegacySize = offsetof(TorchState, next_float_normal_sample);
  KILN_CHECK(size == kStateSize || size == kLegacySize, "Expected either a CPUGeneratorImplStateLegacy of size ",
             kLegacySize, " or a CPUGeneratorImplState of size ", kStateSize,
             " but found the input RNG state size to be ", size);
  unsigned char bytes[kStateSize] = {};  // a legacy state's float-normal tail stays zero: not valid
  for (int64_t i = 0; i < size; ++i) {
    KILN_CHECK(state[i] >= 0 && state[i] <= 255, "set_state(): RNG state must be bytes (values 0 to 255), got ",
               state[i], " at index ", i);
    bytes[i] = static_cast<unsigned char>(state[i]);
  }
  TorchState s;
  std::memcpy(&s, bytes, sizeof s);
  // As torch: the words are truncated to 32 bits, `next` too; then the engine must be valid.
  uint32_t words[Mt19937::kWords];
  for (int i = 0; i < Mt19937::kWords; ++i) words[i] = static_cast<uint32_t>(s.legacy.state[i]);
  const uint32_t next = static_cast<uint32_t>(s.legacy.next);
  KILN_CHECK(s.legacy.seeded != 0 && Mt19937::valid(s.legacy.left, next), "set_state(): Invalid mt19937 state");
  std::lock_guard<std::mutex> lock(mutex_);
  engine_.mt.set(s.legacy.the_initial_seed, words, s.legacy.left, next);
  // The cached double normal: torch's state stores the sample itself in normal_y; the legacy state
  // stored Box-Muller's intermediates, and torch takes rho * sin(2 pi x) from them.
  const double legacy_sample = s.legacy.normal_rho * std::sin(2.0 * M_PI * s.legacy.normal_x);
  engine_.next_double_normal =
      s.legacy.normal_is_valid ? std::optional<double>(size == kStateSize ? s.legacy.normal_y : legacy_sample)
                               : std::nullopt;
  engine_.next_float_normal =
      bytes[offsetof(TorchState, is_next_float_normal_sample_valid)] ? std::optional<float>(s.next_float_normal_sample)
                                                                     : std::nullopt;
}

const Ref<Generator>& default_generator_ref() {
  // Never destroyed: ops may still draw from it while static destructors run at exit. Seeded
  // from the OS's entropy source, as torch's default CPU generator (getNonDeterministicRandom):
  // without kiln.manual_seed, every run draws different numbers.
  static const auto* g = [] {
    auto* ref = new Ref<Generator>(Ref<Generator>::make());
    (*ref)->seed();
    return ref;
  }();
  return *g;
}

Generator& default_generator() { return *default_generator_ref(); }

}  // namespace kiln
