// The backward engine: gradients, errors, long chains, no reference cycles.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "runtime/autograd/engine.h"
#include "tests/cpp/test_helpers.h"

using kiln::api::Tensor;
using kiln_test::floats;
using kiln_test::values;

namespace {
Tensor leaf(std::vector<float> v, std::vector<int64_t> shape) {
  Tensor t = floats(std::move(v), std::move(shape));
  t.set_requires_grad(true);
  return t;
}

bool message_contains(const std::function<void()>& f, const std::string& text) {
  try {
    f();
  } catch (const kiln::Error& e) {
    return std::string(e.what()).find(text) != std::string::npos;
  }
  return false;
}
}  // namespace

TEST(Engine, HandComputedGradients) {
  // y = sum(x * w + exp(x)); dy/dx = w + exp(x), dy/dw = x
  Tensor x = leaf({0, 1, 2}, {3});
  Tensor w = leaf({3, 4, 5}, {3});
  (x * w + x.exp()).sum().backward();
  std::vector<float> gx = values(x.grad()), gw = values(w.grad());
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(gx[i], (3 + i) + std::exp(float(i)), 1e-5);
    EXPECT_FLOAT_EQ(gw[i], float(i));
  }
}

TEST(Engine, BroadcastGradientsAreReducedToInputShapes) {
  Tensor a = leaf({1, 2, 3}, {3, 1});
  Tensor b = leaf({1, 1, 1, 1}, {1, 4});
  (a + b).sum().backward();
  EXPECT_EQ(a.grad().sizes()[0], 3);
  EXPECT_EQ(a.grad().sizes()[1], 1);
  EXPECT_EQ(values(a.grad()), (std::vector<float>{4, 4, 4}));
  EXPECT_EQ(values(b.grad()), (std::vector<float>{3, 3, 3, 3}));
}

TEST(Engine, SecondBackwardWithoutRetainGraphFails) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x.exp().sum();
  y.backward();
  EXPECT_TRUE(message_contains([&] { y.backward(); }, "backward through the graph a second time"));
}

TEST(Engine, RetainGraphAllowsASecondBackward) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = (x * x).sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{4, 8}));  // 2x, twice
}

TEST(Engine, ModifiedSavedTensorIsDetected) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x.exp();  // saves its result
  Tensor z = y.sum();
  y.add_(1);
  EXPECT_TRUE(message_contains([&] { z.backward(); }, "modified by an inplace operation"));
}

TEST(Engine, GradOfInputs) {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor y = (x * x * x).sum();
  std::vector<kiln::TensorBase> g = kiln::grad({y}, {x}, {}, kiln::BackwardOptions{}, false);
  EXPECT_EQ(values(Tensor(g[0])), (std::vector<float>{3, 12, 27}));
  EXPECT_FALSE(x.grad().defined());  // grad() does not accumulate
}

TEST(Engine, LongChainDoesNotOverflowTheStack) {
  Tensor x = leaf({1}, {1});
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0;
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{1}));
  y = Tensor();  // destroys the 100,000-node graph
}

TEST(Engine, NoReferenceCycleThroughSavedOutputs) {
  const int64_t baseline = kiln::TensorImpl::live_count();
  {
    Tensor x = leaf({1, 2}, {2});
    Tensor y = x.exp().tanh();  // both save their outputs
    y.sum().backward();
  }
  EXPECT_EQ(kiln::TensorImpl::live_count(), baseline);
}

TEST(Engine, LeafInPlaceIsRejected) {
  Tensor x = leaf({1, 2}, {2});
  EXPECT_TRUE(message_contains([&] { x.add_(1); }, "a leaf Variable that requires grad"));
}
