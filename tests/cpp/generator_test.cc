// kiln::Mt19937 against the standard library's std::mt19937 (an independent implementation
// of the same algorithm), and Generator's state (torch's 5056-byte layout) round trip and checks.
#include <gtest/gtest.h>

#include <random>

#include "runtime/core/error.h"
#include "runtime/core/generator.h"

namespace kiln {
namespace {

TEST(Mt19937, MatchesStdMt19937OnTheLow32BitsOfTheSeed) {
  for (uint64_t seed : {uint64_t{5489}, uint64_t{0}, Generator::kDefaultSeed, ~uint64_t{0}}) {
    std::mt19937 reference(static_cast<uint32_t>(seed));
    Mt19937 engine(seed);
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(engine(), reference()) << "seed " << seed << " draw " << i;
    EXPECT_EQ(engine.initial_seed(), seed);  // the whole seed is kept
  }
  Mt19937 engine;  // the standard's check value: the 10000th draw of the default seed
  for (int i = 0; i < 9999; ++i) engine();
  EXPECT_EQ(engine(), 4123659995u);
}

uint64_t next(Generator& g) {
  uint64_t v = 0;
  g.draw([&](RandomEngine& e) { v = e.random64(); });
  return v;
}

TEST(Generator, Random64IsTwoDrawsHighFirst) {
  Generator g(42);
  std::mt19937 reference(42);
  const uint64_t hi = reference(), lo = reference();
  EXPECT_EQ(next(g), (hi << 32) | lo);
}

TEST(Generator, StateRoundTripRestoresTheStreamSeedAndCachedNormal) {
  Generator g(42);
  for (int i = 0; i < 500; ++i) next(g);  // mid-block: the position matters
  g.draw([](RandomEngine& e) { e.next_double_normal = 0.25; });
  const std::vector<int64_t> state = g.get_state();
  ASSERT_EQ(static_cast<int64_t>(state.size()), Generator::kStateSize);
  for (int64_t b : state) ASSERT_TRUE(b >= 0 && b <= 255);
  EXPECT_EQ(state[0], 42);  // the_initial_seed, little-endian
  std::vector<uint64_t> expected;
  for (int i = 0; i < 700; ++i) expected.push_back(next(g));
  Generator other(7);
  other.set_state(state.data(), static_cast<int64_t>(state.size()));
  EXPECT_EQ(other.initial_seed(), 42u);
  std::optional<double> cached;
  other.draw([&](RandomEngine& e) { cached = e.next_double_normal; });
  EXPECT_EQ(cached, std::optional<double>(0.25));
  for (uint64_t v : expected) ASSERT_EQ(next(other), v);
  EXPECT_EQ(other.get_state().size(), state.size());
}

TEST(Generator, SetStateRejectsWrongSizeBytesAndInvalidEngine) {
  Generator g;
  std::vector<int64_t> state = g.get_state();
  EXPECT_THROW(g.set_state(state.data(), state.size() - 1), Error);
  std::vector<int64_t> bad = state;
  bad[100] = 256;  // not a byte
  EXPECT_THROW(g.set_state(bad.data(), bad.size()), Error);
  bad = state;
  bad[8] = bad[9] = bad[10] = bad[11] = 0;  // left = 0
  EXPECT_THROW(g.set_state(bad.data(), bad.size()), Error);
  bad = state;
  bad[12] = 0;  // not seeded
  EXPECT_THROW(g.set_state(bad.data(), bad.size()), Error);
  bad = state;
  bad[16] = 113;
  bad[17] = 2;  // next = 625
  EXPECT_THROW(g.set_state(bad.data(), bad.size()), Error);
}

TEST(Generator, SeedIsFreshAndReproducible) {
  Generator a, b;
  const uint64_t s = a.seed();
  EXPECT_EQ(a.initial_seed(), s);
  EXPECT_NE(b.seed(), s);  // two 64-bit draws from the OS's entropy source
  b.manual_seed(s);
  EXPECT_EQ(next(a), next(b));
}

}  // namespace
}  // namespace kiln
