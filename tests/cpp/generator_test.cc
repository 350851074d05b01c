// kiln::Mt19937 against the standard library's std::mt19937_64 (an independent
// implementation of the same algorithm), and Generator's state round trip and checks.
#include <gtest/gtest.h>

#include <random>

#include "runtime/core/error.h"
#include "runtime/core/generator.h"

namespace kiln {
namespace {

TEST(Mt19937, MatchesStdMt19937_64) {
  for (uint64_t seed : {uint64_t{5489}, uint64_t{0}, Generator::kDefaultSeed, ~uint64_t{0}}) {
    std::mt19937_64 reference(seed);
    Mt19937 engine(seed);
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(engine(), reference()) << "seed " << seed << " draw " << i;
  }
  Mt19937 engine;  // the standard's check value: the 10000th draw of the default seed
  for (int i = 0; i < 9999; ++i) engine();
  EXPECT_EQ(engine(), 9981545732273789042ULL);
}

uint64_t next(Generator& g) {
  uint64_t v = 0;
  g.draw([&](Mt19937& e) { v = e(); });
  return v;
}

TEST(Generator, StateRoundTripRestoresTheStreamAndSeed) {
  Generator g(42);
  for (int i = 0; i < 500; ++i) next(g);  // mid-block: the position matters
  const std::vector<int64_t> state = g.get_state();
  ASSERT_EQ(static_cast<int64_t>(state.size()), Generator::kStateSize);
  std::vector<uint64_t> expected;
  for (int i = 0; i < 700; ++i) expected.push_back(next(g));
  Generator other(7);
  other.set_state(state.data(), static_cast<int64_t>(state.size()));
  EXPECT_EQ(other.initial_seed(), 42u);
  for (uint64_t v : expected) ASSERT_EQ(next(other), v);
}

TEST(Generator, SetStateRejectsWrongSizeAndPosition) {
  Generator g;
  std::vector<int64_t> state = g.get_state();
  EXPECT_THROW(g.set_state(state.data(), state.size() - 1), Error);
  state[1] = Mt19937::kWords + 1;
  EXPECT_THROW(g.set_state(state.data(), state.size()), Error);
  state[1] = -1;
  EXPECT_THROW(g.set_state(state.data(), state.size()), Error);
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
