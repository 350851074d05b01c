// The profiler's recorder and saved-tensor hooks from C++: what the Python layer builds on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "runtime/autograd/saved_tensor_hooks.h"
#include "runtime/dispatch/profiler.h"
#include "tests/cpp/test_helpers.h"

using kiln::api::Tensor;
using kiln_test::floats;
using kiln_test::values;

namespace {

const kiln::profiler::Event* find(const std::vector<kiln::profiler::Event>& events, const std::string& name) {
  auto it = std::find_if(events.begin(), events.end(), [&](const auto& e) { return e.name == name; });
  return it == events.end() ? nullptr : &*it;
}

}  // namespace

TEST(Profiler, RecordsOperatorsNodesAndScopes) {
  Tensor x = floats({1, 2, 3}, {3});
  x.set_requires_grad(true);
  kiln::profiler::start(/*record_shapes=*/true);
  kiln::profiler::Handle user = kiln::profiler::begin("my_block");
  Tensor y = (x * x).exp().sum();
  kiln::profiler::end(user);
  y.backward();
  std::vector<kiln::profiler::Event> events = kiln::profiler::stop();

  const auto* block = find(events, "my_block");
  const auto* mul = find(events, "aten::mul");
  const auto* exp = find(events, "aten::exp");
  ASSERT_TRUE(block && mul && exp && find(events, "aten::sum"));
  // The operators ran inside the user scope: it is their parent, and its time covers theirs.
  EXPECT_EQ(events[mul->parent].name, "my_block");
  EXPECT_LE(block->start_ns, mul->start_ns);
  EXPECT_GE(block->end_ns, exp->end_ns);
  EXPECT_EQ(mul->shapes, (kiln::profiler::Shapes{{3}, {3}}));
  // Backward: the engine's event around each node, the node's operators inside it.
  const auto* node = find(events, "ExpBackward0");
  ASSERT_TRUE(node && find(events, "autograd::engine::evaluate_function: ExpBackward0"));
  EXPECT_EQ(events[node->parent].name, "autograd::engine::evaluate_function: ExpBackward0");
  // Nothing is recorded once stopped, and a handle from a finished recording is ignored.
  (x * 2).sum();
  kiln::profiler::end(user);
  kiln::profiler::start(false);
  EXPECT_TRUE(kiln::profiler::stop().empty());
}

TEST(Profiler, SecondStartIsRefused) {
  kiln::profiler::start(false);
  EXPECT_THROW(kiln::profiler::start(false), kiln::Error);
  kiln::profiler::stop();
  EXPECT_THROW(kiln::profiler::stop(), kiln::Error);
}

namespace {

// Packs every saved tensor into a copy it owns (as an offloading scheme would), counting calls.
struct CopyingHooks : kiln::SavedTensorHooks {
  int packed = 0;
  std::shared_ptr<int> unpacked = std::make_shared<int>(0);
  struct Packed : kiln::PackedTensor {
    Tensor copy;
    std::shared_ptr<int> count;
    kiln::TensorBase unpack() const override {
      ++*count;
      return copy;
    }
  };
  std::shared_ptr<kiln::PackedTensor> pack(const kiln::TensorBase& t) override {
    ++packed;
    auto p = std::make_shared<Packed>();
    p->copy = Tensor(t).detach().clone();
    p->count = unpacked;
    return p;
  }
};

}  // namespace

TEST(SavedTensorHooks, PackedCopiesServeBackward) {
  Tensor x = floats({0.5, 1, 2}, {3});
  x.set_requires_grad(true);
  auto hooks = std::make_shared<CopyingHooks>();
  kiln::push_saved_tensor_hooks(hooks);
  Tensor y = (x * x).sin().sum();  // mul saves x twice, sin saves its input
  kiln::pop_saved_tensor_hooks();
  EXPECT_EQ(hooks->packed, 3);
  y.backward();
  EXPECT_EQ(*hooks->unpacked, 3);
  // d/dx sin(x^2) = 2x cos(x^2), by hand
  std::vector<float> g = values(x.grad());
  const float xs[] = {0.5f, 1.0f, 2.0f};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(g[i], 2 * xs[i] * std::cos(xs[i] * xs[i]), 1e-5);
  EXPECT_THROW(kiln::pop_saved_tensor_hooks(), kiln::Error);
}
