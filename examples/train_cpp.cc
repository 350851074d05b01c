// Trains a tiny two-layer network on XOR with kiln's C++ API: tensors, ops,
// backward(), and an SGD step written with in-place ops under NoGradGuard.
#include <cstdio>
#include <vector>

#include "generated/api/kiln.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/core/generator.h"

using kiln::api::Tensor;

int main() {
  kiln::manual_seed(0);
  const kiln::ScalarType f32 = kiln::ScalarType::Float32;
  // Inputs and targets of XOR.
  Tensor x = kiln::api::empty({4, 2}, f32), y = kiln::api::empty({4, 1}, f32);
  const float xs[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}}, ys[4] = {0, 1, 1, 0};
  for (int i = 0; i < 4; ++i) {
    x.data_ptr<float>()[2 * i] = xs[i][0];
    x.data_ptr<float>()[2 * i + 1] = xs[i][1];
    y.data_ptr<float>()[i] = ys[i];
  }
  // Parameters: 2 -> 8 -> 1.
  Tensor w1 = (kiln::api::randn({2, 8}, nullptr, f32) * 0.5).set_requires_grad(true);
  Tensor b1 = kiln::api::zeros({8}, f32, std::nullopt, /*requires_grad=*/true);
  Tensor w2 = (kiln::api::randn({8, 1}, nullptr, f32) * 0.5).set_requires_grad(true);
  Tensor b2 = kiln::api::zeros({1}, f32, std::nullopt, /*requires_grad=*/true);
  std::vector<Tensor> params = {w1, b1, w2, b2};

  const double lr = 0.5;
  double loss_value = 0;
  for (int step = 0; step <= 2000; ++step) {
    Tensor hidden = kiln::api::mm(x, w1).add(b1).tanh();
    Tensor pred = kiln::api::mm(hidden, w2).add(b2).sigmoid();
    Tensor loss = (pred - y).pow(2).mean();
    for (Tensor& p : params) p.set_grad(kiln::TensorBase());
    loss.backward();
    {
      kiln::NoGradGuard no_grad;  // the update itself is not part of the graph
      for (Tensor& p : params) p.sub_(p.grad(), lr);
    }
    loss_value = loss.item<double>();
    if (step % 500 == 0) std::printf("step %4d  loss %.5f\n", step, loss_value);
  }
  Tensor pred = kiln::api::mm(kiln::api::mm(x, w1).add(b1).tanh(), w2).add(b2).sigmoid();
  int correct = 0;
  for (int i = 0; i < 4; ++i) {
    const float p = pred.data_ptr<float>()[i];
    std::printf("xor(%g, %g) = %.3f\n", xs[i][0], xs[i][1], p);
    correct += (p > 0.5f) == (ys[i] > 0.5f);
  }
  std::printf("%d/4 correct\n", correct);
  return correct == 4 ? 0 : 1;
}
