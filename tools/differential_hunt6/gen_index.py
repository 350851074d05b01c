import itertools
out = []
bases = {
 'c': "x = torch.arange(24.).reshape(2, 3, 4)",
 't': "x = torch.arange(24.).reshape(4, 3, 2).permute(2, 1, 0)",
 's': "x = torch.arange(48.).reshape(2, 3, 8)[:, :, ::2]",
 'i': "x = torch.arange(24, dtype=torch.int16).reshape(2, 3, 4)",
 'b': "x = (torch.arange(24).reshape(2, 3, 4) % 3 == 0)",
}
idx_dtypes = ['int64', 'int32', 'int16', 'int8', 'uint8', 'bool']
indices = [
 "0", "-1", "2", "-3", "5", "-5", "None", "...", "(Ellipsis, None)", "(None, Ellipsis, 0)", "(0, ..., -1)",
 "(slice(None), None, 1)", "(..., None, None)", "[0, 1]", "[[0], [1]]", "[-1, -2]", "[2]", "[1, 1, 0]",
 "([0, 1], [1, 2])", "([0, 1], slice(None), [1, 2])", "(slice(None), [0, 2], [1, 3])", "([[0], [1]], [0, 1, 2])",
 "(0, [0, 2])", "([0], ..., [3])", "([0, 1], None, [0, 1])", "(None, [1], 2)", "[True, False]", "[False, False]",
 "True", "False", "(True, 0)", "(..., True)", "torch.tensor(1)", "torch.tensor([1])", "torch.tensor(True)",
 "(slice(None), torch.tensor([0, 2]))", "()", "(0, 0, 0)", "(0, 0, 0, 0)", "(slice(None), slice(None), slice(None), None)",
 "slice(None, None, -1)", "slice(5, 1)", "(slice(1, None), [2, 0])", "[]", "([], [])", "(0, [])",
 "torch.tensor([], dtype=torch.int64)", "np.array([0, 1])", "np.int64(1)", "np.array(True)", "(1.0,)", "'a'",
 "[0, 1.0]", "[[0, 1], [1, 0]]", "(torch.tensor([[0, 1], [1, 0]]), torch.tensor([0, 2]))",
]
for dt in idx_dtypes:
    if dt == 'bool':
        indices += ["torch.tensor([True, False])", "torch.tensor([[True, False, True], [False, False, True]])",
                    "x > 5", "(x > 5)[0]", "(slice(None), torch.tensor([True, False, True]))",
                    "torch.tensor([True, False, True])", "torch.zeros(2, 3, 4, dtype=torch.bool)",
                    "torch.ones(2, 3, 4, dtype=torch.bool).t() if False else torch.ones(2, 3, 4, dtype=torch.bool)[:, :, ::2]",
                    "(torch.tensor([True, True]), 0)", "(torch.tensor([True, True]), torch.tensor([0, 2]))"]
    else:
        indices += [f"torch.tensor([0, -1], dtype=torch.{dt})", f"torch.tensor([[1], [0]], dtype=torch.{dt})",
                    f"(torch.tensor([0, 1], dtype=torch.{dt}), torch.tensor([2, 1], dtype=torch.{dt}))",
                    f"torch.tensor([2], dtype=torch.{dt})", f"torch.tensor(1, dtype=torch.{dt})",
                    f"(slice(None), torch.tensor([0, 2], dtype=torch.{dt}))",
                    f"(..., torch.tensor([3, -4], dtype=torch.{dt}))",
                    f"(slice(None), slice(None), torch.tensor([4], dtype=torch.{dt}))"]
for bk, b in bases.items():
    for ix in indices:
        out.append(f"{b}; r = x[{ix}]")
# setitem
values = ["7", "-1.5", "True", "torch.tensor(2.5)", "torch.tensor([1., 2., 3., 4.])", "torch.tensor(3, dtype=torch.int64)",
          "torch.tensor([9.])", "torch.tensor([[1.], [2.]])", "torch.tensor([1., 2.])", "float('nan')", "2**40", "1e300",
          "torch.tensor(1., dtype=torch.float64)", "torch.tensor([True])", "torch.zeros(2, 3, 4)", "np.float32(2.)"]
set_idx = ["0", "-1", "(0, 1)", "..., 0", "[0, 1]", "([0, 1], [1, 2])", "x > 5", "(x > 5)[0]", "torch.tensor([True, False])",
           "(slice(None), [0, 2])", "torch.tensor([1, 1])", "([0, 0], [1, 1], [2, 2])", "None", "(None, 0)", "5",
           "torch.tensor([5])", "torch.tensor([0, 1], dtype=torch.int32)", "torch.tensor([0, 1], dtype=torch.uint8)",
           "torch.tensor([1, 0], dtype=torch.int8)", "(slice(None), torch.tensor([True, False, True]))", "(..., [3])",
           "torch.tensor(1)", "torch.tensor(True)", "torch.tensor(False)", "[]", "(0, [])", "slice(None, None, 2)"]
for bk, b in bases.items():
    for ix in set_idx:
        for v in values:
            out.append(f"{b}; x[{ix}] = {v}; r = x")
# index_put_ / accumulate
for bk in ('c', 'i', 't'):
    b = bases[bk]
    for v in ["torch.tensor(1.)", "torch.tensor([1., 2.])", "torch.tensor([1, 2])", "torch.tensor([1., 2., 3.])"]:
        for acc in ("True", "False"):
            for ix in ["(torch.tensor([0, 0]),)", "(torch.tensor([0, 0]), torch.tensor([1, 1]))", "(torch.tensor([True, False]),)",
                       "(torch.tensor([0, 0], dtype=torch.int32), torch.tensor([1, 1]))", "(torch.tensor([5]),)", "()",
                       "[torch.tensor([0, 1])]", "(torch.tensor([-1, -2]), torch.tensor([1, 1]), torch.tensor([2, 3]))"]:
                out.append(f"{b}; r = x.index_put_({ix}, {v}, accumulate={acc})")
                out.append(f"{b}; r = x.index_put({ix}, {v}, {acc})")
print('\n'.join(out))
