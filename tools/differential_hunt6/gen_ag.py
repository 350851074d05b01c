out = []
idxs = ["[0, 0, 1]", "torch.tensor([[0, 1], [1, 1]])", "x.detach() > 2", "(slice(None), [1, 1])", "(..., torch.tensor([2, 0, 2]))", "([0, 1], [2, 2])", "torch.tensor([True, False])", "(None, 1)", "(1, ..., None)", "torch.tensor(1)", "np.array([1, 0])"]
for ix in idxs:
    out.append(f"x = torch.arange(6., requires_grad=True).reshape(2, 3); y = x[{ix}]; (y * torch.arange(float(y.numel())).reshape(y.shape)).sum().backward(); r = (y, x.grad if x.grad is not None else torch.zeros(0))")
    out.append(f"x0 = torch.arange(6., requires_grad=True); x = x0.reshape(2, 3); y = x.clone(); y[{ix}] = 100.; (y * torch.arange(6.).reshape(2, 3)).sum().backward(); r = (y, x0.grad)")
    out.append(f"x0 = torch.arange(6., requires_grad=True); v = torch.tensor(7., requires_grad=True); y = x0.reshape(2, 3).clone(); y[{ix}] = v; (y * torch.arange(6.).reshape(2, 3)).sum().backward(); r = (y, x0.grad, v.grad)")
    out.append(f"x = torch.arange(6., requires_grad=True).reshape(2, 3); x[{ix}] = 0.")
    out.append(f"x = torch.arange(6.).reshape(2, 3).requires_grad_(); y = x[{ix}]; y += 1; r = y")
    out.append(f"x = torch.arange(6., dtype=torch.float64).reshape(2, 3); r = x[{ix}].is_contiguous(), x[{ix}]._base is x if hasattr(x[{ix}], '_base') else None")
for e in ["x = torch.zeros(3, requires_grad=True); x.data[0] = 5; r = x", "x = torch.zeros(3, requires_grad=True); x.detach()[0] = 5; r = x", "x = torch.zeros(3, requires_grad=True); y = x * 1; y[0] = 5; r = y.grad_fn is not None",
          "x = torch.zeros(3, requires_grad=True); y = x[:2]; y[0] = 5", "x = torch.zeros(3, requires_grad=True); y = x * 2; y[torch.tensor([0, 0])] = torch.tensor([1., 2.], requires_grad=True); y.sum().backward(); r = x.grad",
          "x = torch.ones(2, 3, requires_grad=True); y = x.index_put((torch.tensor([0, 0]),), torch.ones(3) * 2, accumulate=True); y.sum().backward(); r = (y, x.grad)",
          "x = torch.ones(2, 3, requires_grad=True); v = torch.ones(2, 3, requires_grad=True); y = x.index_put((torch.tensor([1, 1]),), v, accumulate=False); (y * torch.arange(6.).reshape(2, 3)).sum().backward(); r = (x.grad, v.grad)",
          "x = torch.ones(2, 3, requires_grad=True); y = x.masked_fill(x > 0, 2.); y.sum().backward(); r = x.grad",
          "x = torch.ones(3, requires_grad=True); y = x.unsqueeze(0).expand(2, 3); y[0, 0] = 5"]:
    out.append(e)
print('\n'.join(out))
