# promotion with 0-dim tensors and bool/int/float/complex Python scalars; in-place on views and autograd;
# out= aliasing an input; NumPy operands; hostile inputs
out = []
dts = ['bool', 'uint8', 'int8', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64']
def mk(dt, zero=False):
    if dt == 'bool':
        return "torch.tensor(True)" if zero else "torch.tensor([True, False, True])"
    v = "3" if zero else "[1, 2, 3]"
    if dt.startswith('float') or dt == 'bfloat16':
        v = "2.5" if zero else "[1.5, -2.0, 3.25]"
    return f"torch.tensor({v}, dtype=torch.{dt})"
for a in dts:
    for s in ['1j', '2+0j', 'complex(1, 0)', 'np.complex64(1)', 'np.complex128(1j)']:
        for op in ['+', '*', '-', '/', '**', '==', '<', '//']:
            out.append(f"a = {mk(a)}; r = a {op} {s}")
            out.append(f"a = {mk(a)}; r = {s} {op} a")
        for f in ['add', 'mul', 'full_like', 'fill_', 'clamp', 'where', 'result_type', 'tensor', 'pow', 'eq']:
            if f == 'fill_': out.append(f"a = {mk(a)}; r = a.fill_({s})")
            elif f == 'full_like': out.append(f"a = {mk(a)}; r = torch.full_like(a, {s})")
            elif f == 'where': out.append(f"a = {mk(a)}; r = torch.where(a > 1, a, {s})")
            elif f == 'tensor': out.append(f"r = torch.tensor([{s}], dtype=torch.{a})")
            elif f == 'result_type': out.append(f"a = {mk(a)}; r = torch.result_type(a, {s})")
            else: out.append(f"a = {mk(a)}; r = torch.{f}(a, {s})")
    for s in ['np.float64(2.5)', 'np.float32(2.5)', 'np.float16(2.5)', 'np.int64(3)', 'np.int32(3)', 'np.uint8(3)', 'np.bool_(True)',
              'np.array(2.5)', 'np.array(3)', 'np.array([1., 2., 3.])', 'np.array([1, 2, 3])', 'np.array([1, 2, 3], dtype=np.int8)',
              'np.array([True, False, True])', 'np.array([1., 2., 3.], dtype=np.float32)', 'np.array([[1.], [2.]])']:
        for op in ['+', '*', '-', '/', '//', '%', '**', '==', '<', '&', '@']:
            out.append(f"a = {mk(a)}; r = a {op} {s}")
            out.append(f"a = {mk(a)}; r = {s} {op} a")
        out.append(f"a = {mk(a)}; a += {s}; r = a")
        out.append(f"a = {mk(a)}; r = torch.add(a, {s})")
        out.append(f"a = {mk(a)}; r = a.mul({s})")
        out.append(f"a = {mk(a)}.requires_grad_() if {mk(a)}.is_floating_point() else {mk(a)}; r = a * {s}")
    for b in dts:
        for s in ['True', '2', '2.5', '-1']:
            out.append(f"r = ({mk(a, True)} + {mk(b, True)}) * {s}")
            out.append(f"r = {mk(a)} * {mk(b, True)} * {s}")
# in-place on views and autograd
V = ["x[0]", "x[:, 1]", "x.t()", "x.view(-1)", "x.diagonal()", "x.unbind(0)[0]", "x.split(1)[0]", "x.chunk(2)[1]", "x.narrow(0, 0, 1)",
     "x.expand(2, 2, 2)", "x.unsqueeze(0)", "x.as_strided((2,), (1,))", "x.detach()", "x.real", "x.unfold(0, 1, 1)", "x[x > 0]",
     "x[[0]]", "x.reshape(-1)", "x.flatten()", "x.squeeze()", "x.movedim(0, 1)", "x.T", "x.mT", "x.select(1, 0)", "x.view_as(x)"]
OPS = ["add_(1)", "mul_(2)", "zero_()", "fill_(3)", "copy_(torch.ones(1))", "clamp_(0, 1)", "sigmoid_()", "exp_()", "relu_()",
       "abs_()", "__setitem__(0, 5.)", "resize_(1)", "requires_grad_()", "detach_()", "set_(torch.ones(2))", "t_()", "squeeze_()",
       "unsqueeze_(0)", "transpose_(0, 1)", "as_strided_((1,), (1,))", "index_fill_(0, torch.tensor([0]), 1.)", "masked_fill_(torch.tensor(True), 1.)",
       "scatter_(0, torch.tensor([0]), 1.)", "addcmul_(torch.ones(1), torch.ones(1))", "div_(2, rounding_mode='floor')", "neg_()", "pow_(2)", "lerp_(torch.ones(1), 0.5)"]
for setup in ["x = torch.ones(2, 2, requires_grad=True)", "x = torch.ones(2, 2, requires_grad=True) * 1", "x = torch.ones(2, 2); y = torch.ones(2, 2, requires_grad=True); x = x + y",
              "x = torch.ones(2, 2)", "x = torch.ones(2, 2, requires_grad=True).clone()"]:
    for v in V:
        for op in OPS:
            out.append(f"{setup}; v = {v}; v.{op}; r = (x.sum().backward() if x.requires_grad else None, x.grad if x.is_leaf else v)")
    out.append(f"{setup}; v = x[0]; v.add_(1); w = x[1]; w.mul_(v); r = (x.sum().backward(), x.grad if x.is_leaf else x)")
    out.append(f"{setup}; v = x.view(-1); y = v.exp(); v.add_(1); r = (y.sum().backward(),)")
    out.append(f"{setup}; y = x.sigmoid(); y.add_(1); r = (y.sum().backward(),)")
    out.append(f"{setup}; y = x.exp(); y.add_(1); r = (y.sum().backward(), y)")
    out.append(f"{setup}; y = x.unbind(0); y[0].add_(1); r = y")
    out.append(f"{setup}; y = x.split(1); y[0].mul_(2); r = (y[0].sum().backward(),)")
    out.append(f"{setup}; y = x.detach(); y.add_(1); r = (x.sum().backward(), x)")
    out.append(f"{setup}; y = x[0]; x.add_(1); r = (y.sum().backward(), y)")
    out.append(f"{setup}⏎with torch.no_grad():⏎    v = x[0]⏎v.add_(1); r = x")
    out.append(f"{setup}⏎with torch.no_grad():⏎    v = x[0]⏎v.mul_(x[1]); r = (x.sum().backward(),)")
    out.append(f"{setup}⏎with torch.inference_mode():⏎    v = torch.ones(2)⏎r = v.add_(x[0])")
# out= aliasing an input
for f, args in [("add", "a, b"), ("mul", "a, b"), ("sub", "a, b"), ("div", "a, b"), ("matmul", "a, b"), ("mm", "a, b"), ("cat", "[a, b]"),
                ("stack", "[a, b]"), ("exp", "a"), ("neg", "a"), ("cumsum", "a, 0"), ("sort", "a"), ("sum", "a, 0"), ("max", "a, 0"),
                ("clamp", "a, 0, 1"), ("where", "a > 0, a, b"), ("index_select", "a, 0, torch.tensor([1, 0])"), ("gather", "a, 0, torch.tensor([[1, 0], [0, 1]])"),
                ("transpose", "a, 0, 1"), ("addmm", "a, a, b"), ("bmm", "a[None], b[None]"), ("flip", "a, [0]"), ("roll", "a, 1"), ("cross", "a3, b3"),
                ("tril", "a"), ("triu", "a"), ("t", "a"), ("take", "a, torch.tensor([3, 0])"), ("cumprod", "a, 1"), ("logsumexp", "a, 0"),
                ("pow", "a, b"), ("atan2", "a, b"), ("lerp", "a, b, 0.5"), ("maximum", "a, b"), ("outer", "a[0], b[0]"), ("dot", "a[0], b[0]")]:
    for o in ["a", "b", "a.t()", "a[0]", "a.view(-1)", "a[:, :1]", "torch.empty(0)", "a3", "torch.empty(2, 2).t()", "torch.empty(4)[::2]"]:
        out.append(f"a = torch.tensor([[1., 2.], [3., 4.]]); b = torch.tensor([[5., 6.], [7., 8.]]); a3 = torch.arange(3.); b3 = torch.ones(3); o = {o}; rr = torch.{f}({args}, out=o); r = (rr, a, b, o.shape, o.stride())")
print('\n'.join(out))
