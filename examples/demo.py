"""A short tour of what kiln does today: tensors, views, dtype promotion, autograd.

Run with the README's main command (tools/demo.sh).
"""
import kiln

print("kiln", "- tensors from nested lists, NumPy-compatible memory, torch-like printing")
x = kiln.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print("x =", x)
print("x.shape =", x.shape, " x.stride() =", x.stride(), " x.dtype =", x.dtype)

print("\nviews share storage: x.transpose(0, 1) is a view, x[:, 1:] too")
xt = kiln.transpose(x, 0, 1)
print("xt =", xt, " contiguous:", xt.is_contiguous())
x[:, 1:] = 0.5
print("after x[:, 1:] = 0.5, xt =", xt)

print("\ntype promotion follows PyTorch:")
i = kiln.arange(4)
print("  int64 + 1.5 ->", (i + 1.5).dtype, "| int64 * 2 ->", (i * 2).dtype, "| int64 / 2 ->", (i / 2).dtype)

print("\nautograd: y = sum(tanh(w @ v)), dy/dw by backward()")
w = kiln.tensor([[0.1, -0.2], [0.3, 0.4]], requires_grad=True)
v = kiln.tensor([[1.0], [2.0]])
y = kiln.mm(w, v).tanh().sum()
y.backward()
print("y =", y)
print("dy/dw =", w.grad)

print("\nhigher order: d2/dx2 of x**3 at x = 2 is 12")
a = kiln.tensor(2.0, requires_grad=True)
(g,) = kiln.autograd.grad(a ** 3, a, create_graph=True)
(gg,) = kiln.autograd.grad(g, a)
print("first:", g.item(), " second:", gg.item())

print("\nwith kiln.no_grad(): nothing is recorded:")
with kiln.no_grad():
    z = w * 2
print("z.requires_grad =", z.requires_grad)
