// Dispatch keys, the autograd fall-through, and grad mode.
#include <gtest/gtest.h>

#include "runtime/dispatch/grad_mode.h"
#include "runtime/dispatch/dispatcher.h"
#include "tests/cpp/test_helpers.h"

namespace {
int cpu_kernel(int x) { return x + 1; }
}  // namespace

TEST(Dispatcher, AutogradFallsThroughToTheBackend) {
  kiln::Operator<int(int)> op = {"test.op", {&cpu_kernel, nullptr, nullptr}};
  EXPECT_EQ(op.lookup({kiln::DispatchKey::Autograd, kiln::DispatchKey::CPU})(1), 2);
  EXPECT_THROW(op.lookup(kiln::DispatchKeySet(kiln::DispatchKey::CUDA)), kiln::NotImplementedError);
}

TEST(Dispatcher, ThreadLocalSetsIncludeAndExcludeKeys) {
  using kiln::DispatchKey;
  EXPECT_EQ(kiln::dispatch_keys(DispatchKey::CPU, true).highest(), DispatchKey::Autograd);
  {
    kiln::BelowAutogradGuard below;  // an autograd kernel redispatching
    EXPECT_TRUE(kiln::BelowAutograd::is_set());
    EXPECT_EQ(kiln::dispatch_keys(DispatchKey::CPU, true).highest(), DispatchKey::CPU);
    {
      kiln::IncludeDispatchKeyGuard include(DispatchKey::CUDA);
      EXPECT_EQ(kiln::dispatch_keys(DispatchKey::CPU, false).str(), "CUDA, CPU");
    }
    EXPECT_EQ(kiln::dispatch_keys(DispatchKey::CPU, false).str(), "CPU");
  }
  EXPECT_FALSE(kiln::BelowAutograd::is_set());
  EXPECT_EQ(kiln::dispatch_keys(DispatchKey::CPU, true).str(), "Autograd, CPU");
}

TEST(Dispatcher, GradModeDecidesWhetherANodeIsRecorded) {
  kiln::api::Tensor x = kiln::api::ones({2}, std::nullopt, std::nullopt, /*requires_grad=*/true);
  EXPECT_NE((x * x).grad_fn(), nullptr);
  {
    kiln::NoGradGuard no_grad;
    kiln::api::Tensor y = x * x;
    EXPECT_EQ(y.grad_fn(), nullptr);
    EXPECT_FALSE(y.requires_grad());
  }
  EXPECT_TRUE(kiln::GradMode::is_enabled());
}

TEST(Dispatcher, ExplainDoesNotChangeResults) {
  kiln::set_explain_enabled(true);
  kiln::api::Tensor y = kiln::api::ones({2}) + kiln::api::ones({2});
  kiln::set_explain_enabled(false);
  EXPECT_EQ(kiln_test::values(y), (std::vector<float>{2, 2}));
}
