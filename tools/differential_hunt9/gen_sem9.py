"""Autograd semantics snippets: errors (class; `M(...)` ones also compare the message start), leaves and
views, .grad accumulation, hooks, grad modes, torch.autograd.grad options, grad_fn names, custom Functions,
backward(inputs=), autograd.functional. Usage: gen_sem9.py > sem.txt"""

S = []


def s(*lines):
    S.append('⏎'.join(('from h9 import *',) + lines))


# M(f): run f and keep (class, message start): the message text is compared too.
PRE = 'def M(f):⏎    try:⏎        return ("ok", f())⏎    except Exception as e:⏎        return (type(e).__name__, str(e).split("\\n")[0][:90])'


def m(*lines):
    S.append('⏎'.join(('from h9 import *', PRE) + lines))


LEAF = 'x = torch.tensor([1., 2., 3.], requires_grad=True)'
# in-place on leaves and views of leaves
for op in ['x.add_(1)', 'x.mul_(2)', 'x.zero_()', 'x[0] = 5', 'x.copy_(torch.ones(3))', 'x.fill_(1)', 'x.clamp_(0, 1)',
           'x.view(3).add_(1)', 'x[1:].mul_(2)', 'x.unsqueeze(0).zero_()', 'x.resize_(3)',
           'x.resize_(4)', 'x.data.add_(1)', 'x.detach().add_(1)', 'x += 1', 'x.requires_grad_(False)', 'x.sigmoid_()',
           'x.transpose(0, 0).mul_(2)', 'x.unbind(0)[0].add_(1)', 'x.split(1)[0].add_(1)', 'x.chunk(3)[1].mul_(2)',
           'x.set_(torch.ones(3))', 'x.index_put_((torch.tensor([0]),), torch.tensor(1.))', 'x.masked_fill_(x > 1, 0)',
           'x.scatter_(0, torch.tensor([0]), 1.)', 'x.uniform_()', 'x.normal_()', 'x.squeeze_()', 'x.unsqueeze_(0)',
           'x.as_strided_((3,), (1,))', 'x.swapdims_(0, 0)', 'x.relu_()', 'torch.relu_(x)', 'x.exp_()', 'x.neg_()']:
    m(LEAF, f'r = M(lambda: ({op}) if False else exec("{op}", {{"x": x, "torch": torch}}))', 'r = (r, x.requires_grad, x.is_leaf, x.grad_fn is None)')
    m(LEAF, 'with torch.no_grad():', f'    r0 = M(lambda: exec("{op}", {{"x": x, "torch": torch}}))', 'r = (r0, x.requires_grad, x.is_leaf, x.grad_fn is None, x._version > 0)')
# in-place on non-leaf views: grad_fn rebase, version counters
VCASES = [
    ('y = x * 2⏎z = y.exp()⏎y.add_(1)', 'z.sum().backward()'),
    ('y = x.exp()⏎y.add_(1)', 'y.sum().backward()'),
    ('y = x.sigmoid()⏎y.mul_(2)', 'y.sum().backward()'),
    ('y = x.tanh()⏎y[0] = 0', 'y.sum().backward()'),
    ('y = x.exp()⏎z = y[1:]⏎z.mul_(3)', 'y.sum().backward()'),
    ('y = x * 1⏎v = y.view(3)⏎w = v.exp()⏎v.add_(1)', 'w.sum().backward()'),
    ('y = x * 1⏎z = y.pow(2)⏎y.add_(1)', 'z.sum().backward()'),
    ('y = x * 1⏎z = y * 3⏎y.add_(1)', 'z.sum().backward()'),
    ('y = x * 1⏎z = y.sin()⏎y.data.add_(1)', 'z.sum().backward()'),
    ('y = x * 1⏎z = y.sin()⏎y.detach().add_(1)', 'z.sum().backward()'),
    ('y = x * 1⏎z = y.sin()⏎with torch.no_grad(): y.add_(1)', 'z.sum().backward()'),
    ('y = x * 1⏎z = (y * y)⏎y.zero_()', 'z.sum().backward()'),
    ('y = x * 1⏎z = y[0] * y[1]⏎y[2] = 7', 'z.backward()'),
    ('y = x * 1⏎z = y.unbind()⏎z[0].mul_(2)', 'y.sum().backward()'),
    ('y = x * 1⏎z = y.split(1)⏎z[0].mul_(2)', 'y.sum().backward()'),
    ('y = x * 1⏎z = y.chunk(3)⏎z[0].mul_(2)', 'y.sum().backward()'),
    ('y = x * 1⏎z = y.narrow(0, 0, 2)⏎z.mul_(y[2])', 'y.sum().backward()'),
    ('y = x.clone()⏎y.t_()⏎y.mul_(2)', 'y.sum().backward()'),
    ('y = x.clone()⏎with torch.no_grad():⏎    v = y[:2]⏎v.mul_(2)', 'y.sum().backward()'),
    ('y = x.clone()⏎with torch.no_grad():⏎    v = y.view(3)⏎v.mul_(2)', 'y.sum().backward()'),
    ('y = x.clone()⏎v = y.detach()⏎v.mul_(2)', 'y.sum().backward()'),
    ('y = x.clone()⏎with torch.inference_mode():⏎    v = y.view(3)', 'y.sum().backward()'),
    ('y = x.exp()⏎y.requires_grad_(False)', 'y.sum().backward()'),
    ('y = x.exp()⏎z = y.detach_()', 'y.sum().backward()'),
    ('y = x.exp()[:2]⏎y.detach_()', 'y.sum().backward()'),
    ('y = x * 1⏎z = y.sigmoid()⏎y.copy_(torch.ones(3))', 'z.sum().backward()'),
    ('y = x * 1⏎y.copy_(x * 3)', 'y.sum().backward()'),
    ('y = torch.zeros(3)⏎y.copy_(x)', 'y.sum().backward()'),
    ('y = torch.zeros(3)⏎y[1:] = x[:2]', 'y.sum().backward()'),
    ('y = torch.zeros(3, dtype=torch.float64)⏎y.add_(x)', 'y.sum().backward()'),
    ('y = torch.zeros(3)⏎y[0] = x[2] * 2', 'y.sum().backward()'),
    ('y = torch.zeros(2, 3)⏎y[0].copy_(x)⏎y[1].copy_(x * 2)', 'y.sum().backward()'),
    ('y = x * 1⏎z = y.expand(2, 3)⏎z2 = z * 1', 'z2.sum().backward()'),
    ('y = x * 1⏎y.unsqueeze_(0)⏎y.mul_(2)', 'y.sum().backward()'),
    ('y = x * 1⏎y.squeeze_()⏎y.resize_(3)', 'y.sum().backward()'),
]
for setup, bw in VCASES:
    m(LEAF, setup, f'r = M(lambda: {bw})' if '\n' not in bw else bw, 'r = (r, x.grad)')
    m(LEAF, setup, 'r = (type(y.grad_fn).__name__ if y.grad_fn is not None else None, y.requires_grad, y.is_leaf, y._version)'.replace('type(y.grad_fn).__name__', 'y.grad_fn.name()'))
# backward twice, non-scalar, integer tensors
m(LEAF, 'y = (x * x).sum()⏎y.backward()', 'r = M(lambda: y.backward())', 'r = (r, x.grad)')
m(LEAF, 'y = (x.exp()).sum()⏎y.backward()', 'r = M(lambda: y.backward())', 'r = (r, x.grad)')
m(LEAF, 'y = (x + 1).sum()⏎y.backward()', 'r = M(lambda: y.backward())', 'r = (r, x.grad)')
m(LEAF, 'y = (x * 2).sum()⏎y.backward()', 'r = M(lambda: y.backward())', 'r = (r, x.grad)')
m(LEAF, 'y = (x * x).sum()⏎y.backward(retain_graph=True)', 'r = M(lambda: y.backward())', 'r = (r, x.grad)')
m(LEAF, 'y = (x * x).sum()⏎torch.autograd.grad(y, x)', 'r = M(lambda: torch.autograd.grad(y, x))')
m(LEAF, 'y = x.sin()⏎a = y.sum()⏎b = y.mean()⏎a.backward()', 'r = M(lambda: b.backward())', 'r = (r, x.grad)')
m(LEAF, 'y = x * x', 'r = M(lambda: y.backward())')
m(LEAF, 'y = x * x', 'r = M(lambda: torch.autograd.grad(y, x))')
m(LEAF, 'y = x * x', 'r = M(lambda: y.backward(torch.ones(2)))')
m(LEAF, 'y = x * x', 'r = M(lambda: y.backward(torch.ones(3, dtype=torch.float64)))', 'r = (r, x.grad)')
m(LEAF, 'y = x * x', 'r = M(lambda: y.backward(torch.ones(1, 3)))', 'r = (r, x.grad)')
m(LEAF, 'y = x * x', 'r = M(lambda: y.backward(torch.ones(3, dtype=torch.int64)))', 'r = (r, x.grad)')
m(LEAF, 'y = x * x', 'r = M(lambda: y.backward(2.0))', 'r = (r, x.grad)')
m(LEAF, 'y = x.sum()', 'r = M(lambda: y.backward(torch.tensor(3.)))', 'r = (r, x.grad)')
m(LEAF, 'y = x.sum()', 'r = M(lambda: y.backward(torch.tensor([3.])))', 'r = (r, x.grad)')
m(LEAF, 'y = x * x', 'r = M(lambda: torch.autograd.grad(y, x, torch.ones(3)))')
m(LEAF, 'y = x * x', 'r = M(lambda: torch.autograd.grad(y, x, torch.ones(4)))')
m(LEAF, 'y = x * x', 'r = M(lambda: torch.autograd.grad([y], [x], [None]))')
m(LEAF, 'y = x.sum()', 'r = M(lambda: torch.autograd.grad([y], [x], [None]))')
m(LEAF, 'y = x.sum()', 'r = M(lambda: torch.autograd.grad(y, [x, x]))')
m(LEAF, 'y = x.sum()', 'r = M(lambda: torch.autograd.grad(y, []))')
m(LEAF, 'y = x.sum()', 'r = M(lambda: torch.autograd.grad([], [x]))')
m(LEAF, 'y = x.sum()', 'r = M(lambda: torch.autograd.grad((y, y * 2), x))')
m(LEAF, 'y = x.sum()', 'r = M(lambda: torch.autograd.grad((y, y * 2), x, (torch.tensor(1.), None)))')
m(LEAF, 'y = x.sum()', 'r = M(lambda: torch.autograd.grad(y, x, torch.tensor(2.), retain_graph=True))', 'r = (r, M(lambda: torch.autograd.grad(y, x)))')
m(LEAF, 'y = x.sum()', 'r = M(lambda: y.backward(inputs=[]))')
m('x = torch.tensor([1, 2, 3])', 'r = M(lambda: x.requires_grad_())')
m('x = torch.tensor([1, 2, 3])', 'r = M(lambda: torch.tensor([1, 2], requires_grad=True))')
m('x = torch.tensor([1, 2, 3])', 'r = M(lambda: torch.ones(2, dtype=torch.int32, requires_grad=True))')
m('x = torch.tensor([1, 2, 3])', 'r = M(lambda: torch.ones(2, dtype=torch.bool).requires_grad_(True))')
m('x = torch.tensor([1, 2, 3])', 'r = M(lambda: x.requires_grad_(False).requires_grad)')
m('x = torch.tensor([1, 2, 3])', 'def f(): x.requires_grad = True', 'r = M(f)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.long().requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: (x > 1).requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.argmax().requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.max(0).indices.requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.sort().indices.requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.round().requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.sign().requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.floor().requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: torch.zeros_like(x).requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: torch.empty_like(x).requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.new_zeros(2).requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.new_tensor([1.]).requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: torch.tensor(x).requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.clone().requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.to(torch.float64).requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.to(torch.int32).requires_grad)')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.numpy())')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.tolist())')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: float(x[0]))')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: x.detach().numpy().tolist())')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: (x * 2).numpy())')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: repr(x * 2))')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: repr(x))')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: repr(x.sum()))')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: repr(x[0]))')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: repr(x.unbind()))')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'r = M(lambda: repr(x.max(0)))')
m('x = torch.tensor([1., 2.], requires_grad=True)', 'with torch.no_grad(): r = repr(x * 2)')
# .grad accumulation and assignment
s(LEAF, '(x * x).sum().backward()', '(x * 3).sum().backward()', 'r = x.grad')
s(LEAF, '(x * x).sum().backward()', 'g = x.grad', '(x * 3).sum().backward()', 'r = (g is x.grad, g)')
s(LEAF, '(x * x).sum().backward()', 'x.grad = None', '(x * 3).sum().backward()', 'r = x.grad')
s(LEAF, '(x * x).sum().backward()', 'x.grad.zero_()', '(x * 3).sum().backward()', 'r = x.grad')
s(LEAF, '(x * x).sum().backward(create_graph=True)', 'r = (x.grad.requires_grad, x.grad.grad_fn is not None)')
s(LEAF, '(x * x).sum().backward(create_graph=True)', 'g = x.grad', '(x * 3).sum().backward()', 'r = (g is x.grad, x.grad, x.grad.requires_grad)')
m(LEAF, 'def f(): x.grad = torch.ones(2)', 'r = (M(f), x.grad)')
m(LEAF, 'def f(): x.grad = torch.ones(3, dtype=torch.float64)', 'r = (M(f), x.grad)')
m(LEAF, 'def f(): x.grad = torch.ones(3, dtype=torch.int64)', 'r = (M(f), x.grad)')
m(LEAF, 'def f(): x.grad = [1., 2., 3.]', 'r = (M(f), x.grad)')
m(LEAF, 'def f(): x.grad = torch.ones(3)', 'r = (M(f), x.grad)', '(x * 2).sum().backward()', 'r = (r, x.grad)')
m(LEAF, 'def f(): x.grad = torch.ones(6)[::2]', 'r = M(f)', '(x * 2).sum().backward()', 'r = (r, x.grad, x.grad.stride())')
m(LEAF, 'def f(): x.grad = x', 'r = M(f)')
s(LEAF, 'x.grad = torch.ones(3)', 'g = x.grad', '(x * 2).sum().backward()', 'r = (g is x.grad, g)')
s(LEAF, 'y = x * 2', 'r = (y.grad, x.grad)')
s(LEAF, 'y = x * 2', 'y.retain_grad()', '(y * y).sum().backward()', 'r = (y.grad, x.grad, y.is_leaf)')
s(LEAF, 'y = x * 2', 'y.retain_grad()', 'y.retain_grad()', '(y * y).sum().backward()', 'r = (y.grad, y.retains_grad)')
s(LEAF, 'y = x * 2', 'y.retain_grad()', 'z = y.view(3)', 'z.retain_grad()', 'z.mul_(2)', 'z.sum().backward()', 'r = (y.grad, z.grad, x.grad)')
s(LEAF, 'r = (x.retains_grad, x.is_leaf, x.grad_fn)', 'x.retain_grad()', 'r = (r, x.retains_grad)')
s(LEAF, 'y = x * 2', 'y.retain_grad()', 'y.sum().backward(retain_graph=True)', 'y.sum().backward()', 'r = (y.grad, x.grad)')
m('x = torch.tensor([1., 2.])', 'r = M(lambda: x.retain_grad())')
m(LEAF, 'y = x * 2', 'def f(): y.grad = torch.ones(3)', 'r = (M(f), y.grad)')
# hooks
s(LEAF, 'x.register_hook(lambda g: g * 2)', '(x * x).sum().backward()', 'r = x.grad')
s(LEAF, 'x.register_hook(lambda g: None)', '(x * x).sum().backward()', 'r = x.grad')
s(LEAF, 'seen = []', 'x.register_hook(lambda g: seen.append(g.clone()))', '(x * 3).sum().backward()', 'r = (seen, x.grad)')
s(LEAF, 'h = x.register_hook(lambda g: g * 2)', 'h.remove()', '(x * x).sum().backward()', 'r = x.grad')
s(LEAF, 'y = x * 2', 'y.register_hook(lambda g: g + 1)', '(y * y).sum().backward()', 'r = x.grad')
s(LEAF, 'y = x * 2', 'y.register_hook(lambda g: g * 0)', 'y.retain_grad()', '(y * y).sum().backward()', 'r = (x.grad, y.grad)')
s(LEAF, 'y = x * 2', 'y.retain_grad()', 'y.register_hook(lambda g: g * 0)', '(y * y).sum().backward()', 'r = (x.grad, y.grad)')
s(LEAF, 'y = x * 2', 'y.register_hook(lambda g: g * 2)', 'y.register_hook(lambda g: g + 1)', 'y.sum().backward()', 'r = x.grad')
s(LEAF, 'x.register_hook(lambda g: g * 2)', 'x.register_hook(lambda g: g + 1)', 'x.sum().backward()', 'r = x.grad')
s(LEAF, 'seen = []', 'x.register_hook(lambda g: seen.append(1))', 'torch.autograd.grad(x.sum(), x)', 'r = seen')
s(LEAF, 'x.register_hook(lambda g: g * 2)', 'r = torch.autograd.grad((x * x).sum(), x)')
s(LEAF, 'y = x * 2', 'y.register_hook(lambda g: g * 10)', 'r = torch.autograd.grad((y * y).sum(), x)')
s(LEAF, 'y = x * 2', 'y.register_hook(lambda g: g * 10)', 'r = torch.autograd.grad((y * y).sum(), y)')
m(LEAF, 'x.register_hook(lambda g: torch.ones(2))', 'r = M(lambda: (x * x).sum().backward())')
m(LEAF, 'x.register_hook(lambda g: torch.ones(3, dtype=torch.float64))', 'r = (M(lambda: (x * x).sum().backward()), x.grad)')
m(LEAF, 'x.register_hook(lambda g: 5)', 'r = M(lambda: (x * x).sum().backward())')
m('x = torch.tensor([1., 2.])', 'r = M(lambda: x.register_hook(lambda g: g))')
s(LEAF, 'y = x * 2', 'c = []', 'y.grad_fn.register_hook(lambda gi, go: c.append((len(gi), len(go))))', 'y.sum().backward()', 'r = c')
s(LEAF, 'y = x * 2', 'c = []', 'y.grad_fn.register_prehook(lambda go: c.append(len(go)))' , 'y.sum().backward()', 'r = c')
s(LEAF, 'y = x * 2', 'y.grad_fn.register_hook(lambda gi, go: (gi[0] * 3,))', 'y.sum().backward()', 'r = x.grad')
s(LEAF, 'y = x.exp()', 'z = y.sum()', 'r = [type(n[0]).__name__ if n[0] is not None else None for n in z.grad_fn.next_functions]')
# detach
s(LEAF, 'y = x * 2', 'd = y.detach()', 'r = (d.requires_grad, d.is_leaf, d.grad_fn, d._version == y._version)', 'd.add_(1)', 'r = (r, y, y._version)')
m(LEAF, 'y = x * 2', 'd = y.detach()', 'z = y.exp()', 'd.zero_()', 'r = M(lambda: z.sum().backward())')
m(LEAF, 'y = x[:2]', 'r = M(lambda: y.detach_())')
m(LEAF, 'y = x * 2', 'v = y[:2]', 'r = M(lambda: v.detach_())')
m(LEAF, 'y = x * 2', 'r = (M(lambda: y.detach_() is y), y.requires_grad, y.grad_fn, y.is_leaf)')
m(LEAF, 'r = (M(lambda: x.detach_() is x), x.requires_grad, x.is_leaf)')
s(LEAF, 'y = x.data', 'r = (y.requires_grad, y.is_leaf, y._version)', 'y.mul_(2)', 'r = (r, x._version, x)')
s(LEAF, 'x.data = torch.ones(2)', 'r = (x, x.requires_grad, x.shape)')
m(LEAF, 'def f(): x.data = torch.ones(2, dtype=torch.int64)', 'r = (M(f), x.dtype, x.requires_grad)')
m(LEAF, 'def f(): x.data = [1]', 'r = M(f)')
# grad modes
s(LEAF, 'with torch.no_grad():', '    y = x * 2', 'r = (y.requires_grad, y.grad_fn, y.is_leaf)')
s(LEAF, 'with torch.no_grad():', '    with torch.enable_grad():', '        y = x * 2', '    z = x * 2', 'r = (y.requires_grad, z.requires_grad, torch.is_grad_enabled())')
s(LEAF, 'with torch.enable_grad():', '    with torch.no_grad():', '        y = x * 2', 'r = (y.requires_grad, torch.is_grad_enabled())')
s(LEAF, 'with torch.set_grad_enabled(False):', '    y = x * 2', '    a = torch.is_grad_enabled()', 'r = (y.requires_grad, a, torch.is_grad_enabled())')
s(LEAF, 'torch.set_grad_enabled(False)', 'y = x * 2', 'a = torch.is_grad_enabled()', 'torch.set_grad_enabled(True)', 'r = (y.requires_grad, a)')
s(LEAF, '@torch.no_grad()', 'def f(t): return t * 2', 'r = (f(x).requires_grad, f.__name__, torch.is_grad_enabled())')
s(LEAF, '@torch.no_grad()', 'def f(t):', '    yield t * 2', '    yield t * 3', 'r = [a.requires_grad for a in f(x)]')
s(LEAF, '@torch.enable_grad()', 'def f(t): return t * 2', 'with torch.no_grad(): y = f(x)', 'r = y.requires_grad')
s(LEAF, '@torch.inference_mode()', 'def f(t): return t * 2', 'y = f(x)', 'r = (y.requires_grad, y.is_inference())')
s(LEAF, 'with torch.inference_mode():', '    y = x * 2', '    a = torch.is_inference_mode_enabled()', '    b = torch.is_grad_enabled()', 'r = (y.requires_grad, y.is_inference(), a, b, x.is_inference(), torch.is_inference_mode_enabled())')
s(LEAF, 'with torch.inference_mode(False):', '    y = x * 2', 'r = (y.requires_grad, y.is_inference())')
s(LEAF, 'with torch.inference_mode():', '    with torch.inference_mode(False):', '        y = x * 2', '        a = torch.is_grad_enabled()', 'r = (y.requires_grad, y.is_inference(), a)')
s(LEAF, 'with torch.inference_mode():', '    with torch.enable_grad():', '        y = x * 2', 'r = (y.requires_grad, y.is_inference())')
m(LEAF, 'with torch.inference_mode():', '    y = torch.ones(3)', 'r = M(lambda: (x * y).sum().backward())', 'r = (r, x.grad)')
m(LEAF, 'with torch.inference_mode():', '    y = torch.ones(3)', 'r = M(lambda: y.add_(1))')
m(LEAF, 'with torch.inference_mode():', '    y = torch.ones(3)', 'r = M(lambda: y.requires_grad_())')
m(LEAF, 'with torch.inference_mode():', '    y = torch.ones(3)', 'r = M(lambda: y.view(3).requires_grad)')
m(LEAF, 'with torch.inference_mode():', '    y = torch.ones(3)', 'r = M(lambda: y.clone().is_inference())')
m(LEAF, 'with torch.inference_mode():', '    y = torch.ones(3)', 'def f():', '    z = x * 1', '    z.add_(y)', '    return z.requires_grad', 'r = M(f)')
m(LEAF, 'y = torch.ones(3)', 'with torch.inference_mode():', '    r = M(lambda: y.add_(1))', 'r = (r, y._version)')
m(LEAF, 'y = torch.ones(3)', 'with torch.inference_mode():', '    r = M(lambda: y.view(3).is_inference())')
m(LEAF, 'with torch.inference_mode():', '    r = M(lambda: x.add_(1))', 'r = (r, x)')
s(LEAF, 'with torch.no_grad():', '    y = x[:2]', 'r = (y.requires_grad, y._is_view(), y._base is x)')
m(LEAF, 'with torch.no_grad():', '    y = x[:2]', 'r = M(lambda: y.mul_(2))', 'r = (r, x)')
m(LEAF, 'with torch.no_grad():', '    y = x[:2]', 'y.requires_grad_()', 'r = (M(lambda: y.mul_(2)), y.requires_grad)')
s(LEAF, 'with torch.no_grad():', '    y = x * 2', '    y.requires_grad_()', 'r = (y.requires_grad, y.is_leaf)')
s('r = (torch.no_grad().__class__.__name__, torch.is_grad_enabled(), isinstance(torch.no_grad(), torch.autograd.grad_mode.no_grad))')
s('g = torch.set_grad_enabled(False)', 'a = torch.is_grad_enabled()', 'torch.set_grad_enabled(True)', 'r = a')
m('r = M(lambda: torch.set_grad_enabled("yes"))')
m('r = M(lambda: torch.set_grad_enabled())')
s('class A:', '    @torch.no_grad()', '    def f(self, t): return t * 2', 'x = torch.ones(2, requires_grad=True)', 'r = A().f(x).requires_grad')
# torch.autograd.grad options
m(LEAF, 'y = torch.ones(3, requires_grad=True)', 'z = (x * 2).sum()', 'r = M(lambda: torch.autograd.grad(z, [x, y]))')
m(LEAF, 'y = torch.ones(3, requires_grad=True)', 'z = (x * 2).sum()', 'r = M(lambda: torch.autograd.grad(z, [x, y], allow_unused=True))')
m(LEAF, 'y = torch.ones(3, requires_grad=True)', 'z = (x * 2).sum()', 'r = M(lambda: torch.autograd.grad(z, [y], allow_unused=True))')
m(LEAF, 'y = torch.ones(3)', 'z = (x * 2).sum()', 'r = M(lambda: torch.autograd.grad(z, [y]))')
m(LEAF, 'z = (x * 2).sum()', 'r = M(lambda: torch.autograd.grad(z, x, only_inputs=False))')
m(LEAF, 'z = (x * 2).sum().detach()', 'r = M(lambda: torch.autograd.grad(z, x))')
m(LEAF, 'z = (x * 2).sum()', 'r = M(lambda: torch.autograd.grad(z, x, create_graph=True)[0].requires_grad)')
m(LEAF, 'z = (x * 2).sum()', 'r = M(lambda: torch.autograd.grad(z, x, create_graph=True)[0].grad_fn)')
m(LEAF, 'z = (x * x).sum()', 'r = M(lambda: torch.autograd.grad(z, x, create_graph=True)[0].grad_fn.name())')
m(LEAF, 'z = (x * x).sum()', 'g, = torch.autograd.grad(z, x, create_graph=True)', 'r = M(lambda: torch.autograd.grad(g.sum(), x))')
m(LEAF, 'z = (x * x).sum()', 'g, = torch.autograd.grad(z, x)', 'r = M(lambda: torch.autograd.grad(g.sum(), x))')
m(LEAF, 'z = (x * 2).sum()', 'g, = torch.autograd.grad(z, x, create_graph=True)', 'r = M(lambda: torch.autograd.grad(g.sum(), x))')
m(LEAF, 'z = (x * 2).sum()', 'g, = torch.autograd.grad(z, x, create_graph=True)', 'r = M(lambda: torch.autograd.grad(g.sum(), x, allow_unused=True))')
m(LEAF, 'y = x * 2', 'z = y.sum()', 'r = M(lambda: torch.autograd.grad(z, y))', 'r = (r, M(lambda: torch.autograd.grad(z, x)))')
m(LEAF, 'y = x * 2', 'z = y.sum()', 'r = M(lambda: torch.autograd.grad(z, (y, x)))')
m(LEAF, 'y = x * 2', 'z = y.sum()', 'r = M(lambda: torch.autograd.grad(z, x, retain_graph=False))', 'r = (r, M(lambda: torch.autograd.grad(z, x)))')
m(LEAF, 'z = x.sum()', 'r = M(lambda: torch.autograd.grad(z, x, is_grads_batched=True, grad_outputs=torch.eye(1)[0] if False else torch.ones(2)))')
m(LEAF, 'z = x * 2', 'r = M(lambda: torch.autograd.grad(z, x, torch.eye(3), is_grads_batched=True))')
m(LEAF, 'z = x * 2', 'r = M(lambda: torch.autograd.grad(z, x, torch.ones(3, dtype=torch.float64)))')
m(LEAF, 'z = x * 2', 'r = M(lambda: torch.autograd.grad(z, x, torch.ones(3, 1)))')
m(LEAF, 'z = x * 2', 'r = M(lambda: torch.autograd.grad(z, x, torch.ones(1)))')
m(LEAF, 'z = x * 2', 'r = M(lambda: torch.autograd.grad(z, x, torch.ones(())))')
m(LEAF, 'z = x * 2', 'r = M(lambda: torch.autograd.grad(z, x, 1.0))')
m(LEAF, 'z = x * 2', 'r = M(lambda: torch.autograd.grad(z, x, torch.ones(3, dtype=torch.int64)))')
m(LEAF, 'z = x * 2', 'r = M(lambda: torch.autograd.grad(z, x, torch.ones(3, requires_grad=True), create_graph=True)[0].requires_grad)')
m(LEAF, 'r = M(lambda: torch.autograd.grad(x, x))')
m(LEAF, 'r = M(lambda: torch.autograd.grad(x.sum(), x))')
m(LEAF, 'r = M(lambda: torch.autograd.grad(x, x, torch.ones(3) * 5))')
m(LEAF, 'r = M(lambda: torch.autograd.grad(x.sum(), x.detach()))')
m(LEAF, 'r = M(lambda: torch.autograd.grad(x.sum(), [x[0]]))')
m(LEAF, 'r = M(lambda: torch.autograd.grad(x.sum(), (x,), None, None, False, False, True))')
m(LEAF, 'r = M(lambda: torch.autograd.backward(x.sum()))', 'r = (r, x.grad)')
m(LEAF, 'r = M(lambda: torch.autograd.backward([x.sum(), (x * 2).sum()]))', 'r = (r, x.grad)')
m(LEAF, 'r = M(lambda: torch.autograd.backward([x * 1], [torch.ones(3)]))', 'r = (r, x.grad)')
m(LEAF, 'r = M(lambda: torch.autograd.backward(x * 1, grad_tensors=torch.ones(3)))', 'r = (r, x.grad)')
m(LEAF, 'r = M(lambda: torch.autograd.backward(x * 1))', 'r = (r, x.grad)')
m(LEAF, 'r = M(lambda: torch.autograd.backward(x.sum(), inputs=x))', 'r = (r, x.grad)')
m(LEAF, 'r = M(lambda: torch.autograd.backward(torch.ones(2).sum()))')
m(LEAF, 'r = M(lambda: torch.ones(2).sum().backward())')
m(LEAF, 'r = M(lambda: x.sum().detach().backward())')
m(LEAF, 'r = M(lambda: x.sum().backward())', 'r = (r, x.grad)')
m(LEAF, 'r = M(lambda: x.backward(torch.ones(3)))', 'r = (r, x.grad)')
m(LEAF, 'r = M(lambda: x[0].backward())', 'r = (r, x.grad)')
m(LEAF, 'r = M(lambda: x.sum().backward(torch.ones(3)))', 'r = (r, x.grad)')
# backward(inputs=)
m(LEAF, 'y = torch.ones(3, requires_grad=True)', 'z = (x * y).sum()', 'r = M(lambda: z.backward(inputs=[x]))', 'r = (r, x.grad, y.grad)')
m(LEAF, 'y = torch.ones(3, requires_grad=True)', 'z = (x * y).sum()', 'r = M(lambda: z.backward(inputs=x))', 'r = (r, x.grad, y.grad)')
m(LEAF, 'y = torch.ones(3, requires_grad=True)', 'w = x * 2', 'z = (w * y).sum()', 'r = M(lambda: z.backward(inputs=[w]))', 'r = (r, x.grad, y.grad, w.grad)')
m(LEAF, 'y = torch.ones(3, requires_grad=True)', 'w = x * 2', 'z = (w * y).sum()', 'r = M(lambda: z.backward(inputs=[w, y]))', 'r = (r, x.grad, y.grad, w.grad)')
m(LEAF, 'y = torch.ones(3)', 'z = (x * y).sum()', 'r = M(lambda: z.backward(inputs=[y]))', 'r = (r, x.grad)')
m(LEAF, 'y = torch.ones(3, requires_grad=True)', 'z = (x * 2).sum()', 'r = M(lambda: z.backward(inputs=[y]))', 'r = (r, x.grad, y.grad)')
m(LEAF, 'z = (x * 2).sum()', 'r = M(lambda: z.backward(inputs=[x, x]))', 'r = (r, x.grad)')
m(LEAF, 'z = (x * 2).sum()', 'r = M(lambda: z.backward(inputs=()))', 'r = (r, x.grad)')
m(LEAF, 'z = (x * 2).sum()', 'r = M(lambda: z.backward(inputs=[x[0]]))', 'r = (r, x.grad)')
# grad_fn names and structure
for e in ['x * 2', 'x + 1', 'x - x', 'x / 2', 'x ** 2', 'x.exp()', 'x.sum()', 'x.mean()', 'x[0]', 'x[1:]', 'x[[0, 1]]',
          'x.view(3)', 'x.reshape(3, 1)', 'x.unsqueeze(0).t()', 'x.expand(2, 3)', 'x.clone()', 'x.to(torch.float64)',
          'x.double()', 'x.relu()', 'x.sigmoid()', 'x.tanh()', 'torch.cat([x, x])', 'torch.stack([x, x])', 'x.max()', 'x.max(0)[0]',
          'x.sort()[0]', 'x.topk(2)[0]', 'x.unbind()[0]', 'x.split(1)[0]', 'x.chunk(3)[2]', 'x.norm()', 'x.abs()',
          'x @ x', 'x.unsqueeze(0) @ x.unsqueeze(1)', 'torch.nn.functional.linear(x, x.unsqueeze(0))', 'x.softmax(0)',
          'x.log_softmax(0)', 'torch.nn.functional.cross_entropy(x.unsqueeze(0), torch.tensor([1]))', 'x.squeeze()',
          'x.flip(0)', 'x.roll(1)', 'x.cumsum(0)', 'x.prod()', 'x.var()', 'x.std()', 'x.clamp(0, 1)', 'x.where(x > 1, x * 0)',
          'x.masked_fill(x > 1, 0)', 'x.index_select(0, torch.tensor([1]))', 'x.gather(0, torch.tensor([1]))', 'torch.where(x > 1, x, 0.)',
          'x.contiguous()', 'x.float()', 'x.type(torch.float64)', 'x.detach() * 1', 'x.repeat(2)', 'x.narrow(0, 0, 1)', 'x.diag()',
          'x.pow(x)', 'x.maximum(x)', 'x.lerp(x, 0.5)', 'x.addcmul(x, x)', 'torch.nn.functional.gelu(x)', 'torch.nn.functional.silu(x)',
          'x.sqrt()', 'x.rsqrt()', 'x.log()', 'x.neg()', '-x', 'x.sin()', 'x.atan2(x)', 'x.mm(x.unsqueeze(1)) if False else x.outer(x)',
          'x.dot(x)', 'x.movedim(0, 0)', 'x.permute(0)', 'x.transpose(0, 0)', 'x.unfold(0, 2, 1)', 'x.as_strided((2,), (1,))', 'x.real',
          'x.flatten()', 'x.amax()', 'x.logsumexp(0)', 'x.cummax(0)[0]', 'torch.nn.functional.dropout(x, 0.5, False)',
          'torch.nn.functional.layer_norm(x, (3,))', 'torch.nn.functional.mse_loss(x, x.detach())', 'x.new_ones(3) * x', 'x.type_as(x)']:
    m(LEAF, f'y = {e}', 'r = M(lambda: (y.grad_fn.name(), type(y.grad_fn).__name__, [None if f is None else f.name() for f, _ in y.grad_fn.next_functions]))')
m(LEAF, 'y = x * 2', 'r = M(lambda: (y.grad_fn.next_functions[0][0].variable is x, y.grad_fn.next_functions[0][1]))')
m(LEAF, 'y = x * 2', 'r = M(lambda: y.grad_fn.metadata)')
m(LEAF, 'y = x * x', 'r = M(lambda: [a for a in dir(y.grad_fn) if a.startswith("_saved")])')
m(LEAF, 'y = x * x', 'r = M(lambda: torch.equal(y.grad_fn._saved_self, x))')
m(LEAF, 'y = x.exp()', 'r = M(lambda: torch.equal(y.grad_fn._saved_result, y))')
m(LEAF, 'y = x * x', 'r = M(lambda: y.grad_fn(torch.ones(3)))')
m(LEAF, 'y = x.sum()', 'r = M(lambda: y.grad_fn(torch.tensor(2.)))')
m(LEAF, 'y = x * 2', 'r = M(lambda: y.grad_fn == y.grad_fn)')
m(LEAF, 'y = x * 2', 'r = M(lambda: y.grad_fn.requires_grad if hasattr(y.grad_fn, "requires_grad") else "na")')
m(LEAF, 'r = M(lambda: (x.grad_fn, x.is_leaf, x.requires_grad, x.grad, x.retains_grad, x._version, x.output_nr))')
m(LEAF, 'y = x.unbind()', 'r = M(lambda: [t.output_nr for t in y])')
m(LEAF, 'y = x.max(0)', 'r = M(lambda: (y[0].output_nr, y[1].output_nr, y[1].requires_grad))')
# custom Functions
FN = ['class Sq(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        ctx.save_for_backward(a)', '        return a * a',
      '    @staticmethod', '    def backward(ctx, g):', '        a, = ctx.saved_tensors', '        return 2 * a * g']
s(LEAF, *FN, 'y = Sq.apply(x)', 'y.sum().backward()', 'r = (x.grad, y.grad_fn.name(), type(y.grad_fn).__name__, y.requires_grad)')
s(LEAF, *FN, 'y = Sq.apply(x)', 'g, = torch.autograd.grad(y.sum(), x, create_graph=True)', 'g2, = torch.autograd.grad(g.sum(), x)', 'r = (g, g2)')
s(LEAF, *FN, 'with torch.no_grad():', '    y = Sq.apply(x)', 'r = (y.requires_grad, y.grad_fn)')
s(*FN, 'y = Sq.apply(torch.ones(2))', 'r = (y.requires_grad, y.grad_fn)')
m(LEAF, *FN, 'r = M(lambda: Sq.apply(x, 3))')
m(LEAF, *FN, 'r = M(lambda: Sq.apply(a=x))')
m(LEAF, *FN, 'r = M(lambda: Sq.forward(None, x))')
m(LEAF, *FN, 'r = M(lambda: Sq()(x))')
FN2 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a, b, k):', '        ctx.k = k', '        ctx.save_for_backward(a, b)',
       '        return a * b * k', '    @staticmethod', '    def backward(ctx, g):', '        a, b = ctx.saved_tensors',
       '        r.append(ctx.needs_input_grad)', '        return (g * b * ctx.k if ctx.needs_input_grad[0] else None), (g * a * ctx.k if ctx.needs_input_grad[1] else None), None']
s(LEAF, 'r = []', *FN2, 'b = torch.ones(3)', 'F.apply(x, b, 2.).sum().backward()', 'r = (r, x.grad)')
s(LEAF, 'r = []', *FN2, 'b = torch.ones(3, requires_grad=True)', 'F.apply(x, b, 2.).sum().backward()', 'r = (r, x.grad, b.grad)')
s(LEAF, 'r = []', *FN2, 'b = torch.ones(3, requires_grad=True)', 'torch.autograd.grad(F.apply(x, b, 2.).sum(), b)', 'r = r')
FN3 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        return a * 2, a.sum()', '    @staticmethod',
       '    def backward(ctx, g1, g2):', '        r.append((g1 is None, g2 is None, None if g2 is None else g2.shape))', '        return g1 * 2 + (0 if g2 is None else g2)']
s(LEAF, 'r = []', *FN3, 'a, b = F.apply(x)', 'a.sum().backward()', 'r = (r, x.grad)')
s(LEAF, 'r = []', *FN3.copy()[:4] + ['        return a * 2, a.sum()'] + FN3[4:], 'a, b = F.apply(x)', 'b.backward()', 'r = (r, x.grad)')
FN3M = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        ctx.set_materialize_grads(False)',
        '        return a * 2, a.sum()', '    @staticmethod', '    def backward(ctx, g1, g2):',
        '        r.append((g1 is None, g2 is None))', '        return (0 if g1 is None else g1 * 2) + (0 if g2 is None else g2)']
s(LEAF, 'r = []', *FN3M, 'a, b = F.apply(x)', 'a.sum().backward()', 'r = (r, x.grad)')
s(LEAF, 'r = []', *FN3M, 'a, b = F.apply(x)', 'b.backward()', 'r = (r, x.grad)')
FN4 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        a.mul_(2)', '        ctx.mark_dirty(a)', '        return a',
       '    @staticmethod', '    def backward(ctx, g):', '        return g * 2']
m(LEAF, *FN4, 'y = x * 1', 'z = F.apply(y)', 'r = M(lambda: (z is y, z.grad_fn.name(), y._version))', 'z.sum().backward()', 'r = (r, x.grad)')
m(LEAF, *FN4, 'r = M(lambda: F.apply(x))')
m(LEAF, *FN4, 'y = x * 1', 'v = y[:2]', 'z = M(lambda: F.apply(v))', 'r = (z, M(lambda: y.grad_fn.name()))')
FN5 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        i = a.argmax()', '        o = a * 2', '        m = a > 1',
       '        ctx.mark_non_differentiable(i, m)', '        return o, i, m',
       '    @staticmethod', '    def backward(ctx, g, gi, gm):', '        r.append((gi, gm))', '        return g * 2']
s(LEAF, 'r = []', *FN5, 'o, i, mm = F.apply(x)', 'o.sum().backward()', 'r = (r, x.grad, i.requires_grad, mm.requires_grad, o.requires_grad)')
FN6 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        o = a * 2', '        ctx.mark_non_differentiable(o)', '        return o',
       '    @staticmethod', '    def backward(ctx, g):', '        return g * 2']
m(LEAF, *FN6, 'o = F.apply(x)', 'r = (o.requires_grad, o.grad_fn is None, M(lambda: o.sum().backward()))')
FN7 = ['class F(torch.autograd.Function):', '    @staticmethod', '    @torch.autograd.function.once_differentiable', '    def backward(ctx, g):', '        return g * ctx.saved_tensors[0] * 2',
       '    @staticmethod', '    def forward(ctx, a):', '        ctx.save_for_backward(a)', '        return a * a']
m(LEAF, *FN7, 'g, = torch.autograd.grad(F.apply(x).sum(), x, create_graph=True)', 'r = (g, g.requires_grad, M(lambda: g.sum().backward()))')
m(LEAF, *FN7, 'g, = torch.autograd.grad(F.apply(x).sum(), x)', 'r = (g, g.requires_grad)')
FN8 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        return a.view(3)', '    @staticmethod', '    def backward(ctx, g):', '        return g']
m(LEAF, *FN8, 'y = x * 1', 'o = F.apply(y)', 'r = (o._is_view(), M(lambda: o.mul_(2)))')
m(LEAF, *FN8, 'o = F.apply(x)', 'r = (o._is_view(), o.is_leaf, M(lambda: o.grad_fn.name()))')
FN9 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        return a', '    @staticmethod', '    def backward(ctx, g):', '        return g * 3']
m(LEAF, *FN9, 'o = F.apply(x)', 'o.sum().backward()', 'r = (o is x, x.grad, M(lambda: o.grad_fn.name()))')
FN10 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        return a * 2', '    @staticmethod', '    def backward(ctx, g):', '        return g, g']
m(LEAF, *FN10, 'r = M(lambda: F.apply(x).sum().backward())')
FN11 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        return a * 2', '    @staticmethod', '    def backward(ctx, g):', '        return g[:2]']
m(LEAF, *FN11, 'r = M(lambda: F.apply(x).sum().backward())')
FN12 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        return a * 2', '    @staticmethod', '    def backward(ctx, g):', '        return g.double()']
m(LEAF, *FN12, 'r = (M(lambda: F.apply(x).sum().backward()), x.grad)')
FN13 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        return a * 2']
m(LEAF, *FN13, 'r = M(lambda: F.apply(x).sum().backward())')
FN14 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        ctx.save_for_backward(a)', '        return a * 2',
        '    @staticmethod', '    def backward(ctx, g):', '        return g * ctx.saved_tensors[0]']
m(LEAF, *FN14, 'y = x * 1', 'o = F.apply(y)', 'y.add_(1)', 'r = M(lambda: o.sum().backward())')
m(LEAF, *FN14, 'o = F.apply(x)', 'o.sum().backward()', 'r = M(lambda: o.sum().backward())')
FN15 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        ctx.save_for_backward(a * 2)', '        return a * 2',
        '    @staticmethod', '    def backward(ctx, g):', '        return g * ctx.saved_tensors[0]']
m(LEAF, *FN15, 'r = M(lambda: F.apply(x).sum().backward())', 'r = (r, x.grad)')
FN16 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a, n):', '        return a * n, n', '    @staticmethod', '    def backward(ctx, g, gn):', '        return g * 2, None']
m(LEAF, *FN16, 'o, n = F.apply(x, 3)', 'o.sum().backward()', 'r = (n, x.grad)')
FN17 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(ctx, a):', '        r.append(torch.is_grad_enabled())', '        return a.exp()', '    @staticmethod',
        '    def backward(ctx, g):', '        r.append(torch.is_grad_enabled())', '        return g']
s(LEAF, 'r = []', *FN17, 'F.apply(x).sum().backward()', 'r = r')
s(LEAF, 'r = []', *FN17, 'torch.autograd.grad(F.apply(x).sum(), x, create_graph=True)', 'r = r')
FN18 = ['class F(torch.autograd.Function):', '    @staticmethod', '    def forward(a):', '        return a * 2', '    @staticmethod',
        '    def setup_context(ctx, inputs, output):', '        ctx.k = 2', '    @staticmethod', '    def backward(ctx, g):', '        return g * ctx.k']
m(LEAF, *FN18, 'r = M(lambda: (F.apply(x).sum().backward(), x.grad)[1])')
m(LEAF, 'class F(torch.autograd.Function):', '    pass', 'r = M(lambda: F.apply(x))')
m(LEAF, 'r = M(lambda: torch.autograd.Function.apply(x))')
# autograd.functional
for e in ['torch.autograd.functional.jacobian(lambda a: a ** 2, x)', 'torch.autograd.functional.jacobian(lambda a: (a ** 2).sum(), x)',
          'torch.autograd.functional.jacobian(lambda a, b: a * b, (x, x * 2))', 'torch.autograd.functional.jacobian(lambda a: (a, a.sum()), x)',
          'torch.autograd.functional.jacobian(lambda a: a.exp(), x, create_graph=True).requires_grad',
          'torch.autograd.functional.jacobian(lambda a: a.exp(), x, vectorize=True)',
          'torch.autograd.functional.jacobian(lambda a: a.exp(), x, strategy="forward-mode", vectorize=True)',
          'torch.autograd.functional.jacobian(lambda a: torch.ones(2), x)', 'torch.autograd.functional.jacobian(lambda a: torch.ones(2), x, strict=True)',
          'torch.autograd.functional.jacobian(lambda a: a @ a.t(), x.reshape(3, 1) if False else x.view(1, 3))',
          'torch.autograd.functional.hessian(lambda a: (a ** 3).sum(), x)', 'torch.autograd.functional.hessian(lambda a: a.prod(), x)',
          'torch.autograd.functional.hessian(lambda a, b: (a * b).sum(), (x, x + 1))', 'torch.autograd.functional.hessian(lambda a: a.sum(), x)',
          'torch.autograd.functional.hessian(lambda a: a ** 2, x)', 'torch.autograd.functional.hessian(lambda a: (a.exp()).sum(), x, vectorize=True)',
          'torch.autograd.functional.vjp(lambda a: a ** 2, x, torch.ones(3))', 'torch.autograd.functional.vjp(lambda a: (a ** 2).sum(), x)',
          'torch.autograd.functional.vjp(lambda a: a ** 2, x)', 'torch.autograd.functional.jvp(lambda a: a ** 2, x, torch.ones(3))',
          'torch.autograd.functional.jvp(lambda a: a.sum() * a, x, torch.arange(3.))', 'torch.autograd.functional.jvp(lambda a: a ** 2, x)',
          'torch.autograd.functional.vhp(lambda a: (a ** 3).sum(), x, torch.ones(3))', 'torch.autograd.functional.hvp(lambda a: (a ** 3).sum(), x, torch.ones(3))',
          'torch.autograd.functional.jacobian(lambda a: a ** 2, torch.tensor(2.))', 'torch.autograd.functional.hessian(lambda a: a ** 3, torch.tensor(2.))',
          'torch.autograd.functional.jacobian(lambda a: a.int(), x)', 'torch.autograd.functional.jacobian(lambda a: 3, x)',
          'torch.autograd.functional.jacobian(lambda a: a ** 2, [x])', 'torch.autograd.functional.jacobian(lambda a: a ** 2, x.detach())',
          'torch.autograd.functional.jacobian(lambda a: a.detach(), x)', 'torch.autograd.functional.jacobian(lambda a: a.detach(), x, strict=True)']:
    m(LEAF, f'r = M(lambda: {e})')
# saved tensor hooks, anomaly mode, misc
s(LEAF, 'c = []', 'with torch.autograd.graph.saved_tensors_hooks(lambda t: (c.append(1), t)[1], lambda t: t * 1):', '    y = (x * x).sum()', 'y.backward()', 'r = (len(c), x.grad)')
s(LEAF, 'with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 2):', '    y = (x * x).sum()', 'y.backward()', 'r = x.grad')
m(LEAF, 'with torch.autograd.set_detect_anomaly(True):', '    y = x.sqrt() * 0', '    z = (x * torch.tensor([0., 1, 1])).sqrt()', '    r = M(lambda: (x - x).sqrt().sum().backward())', 'r = (r, x.grad)')
m(LEAF, 'with torch.autograd.detect_anomaly():', '    r = M(lambda: (x - x).sqrt().sum().backward())', 'r = (r, x.grad)')
s(LEAF, 'r = (torch.is_anomaly_enabled(), torch.autograd.grad_mode.set_grad_enabled.__name__)')
m(LEAF, 'y = x.expand(2, 3)', 'r = M(lambda: y.add_(1))')
m(LEAF, 'y = x * 1', 'z = y.expand(2, 3)', 'r = M(lambda: z.add_(1))')
m(LEAF, 'y = x * 1', 'z = y.unsqueeze(0).expand(2, 3)', 'r = M(lambda: z.mul_(torch.ones(2, 3)))')
m('x = torch.ones(2, 3, requires_grad=True)', 'y = x * 1', 'o = y.unbind(0)', 'r = M(lambda: o[0].mul_(2))', 'r = (r, M(lambda: y.sum().backward()), x.grad)')
m('x = torch.ones(2, 3, requires_grad=True)', 'y = x * 1', 'o = y.split(1)', 'r = M(lambda: o[0].mul_(2))')
m('x = torch.ones(2, 3, requires_grad=True)', 'y = x * 1', 'o = y.chunk(2)', 'r = M(lambda: o[0].mul_(2))')
m('x = torch.ones(2, 3, requires_grad=True)', 'y = x * 1', 'o = y.unbind(0)', 'with torch.no_grad():', '    r = M(lambda: o[0].mul_(2))', 'r = (r, y)')
m('x = torch.ones(2, 3, requires_grad=True)', 'o = x.unbind(0)', 'r = M(lambda: o[0].mul_(2))')
m('x = torch.ones(2, 3)', 'o = x.unbind(0)', 'r = M(lambda: o[0].mul_(2))', 'r = (r, x)')
m('x = torch.ones(2, 3, requires_grad=True)', 'y = x * 1', 'r = M(lambda: y.unbind(0)[0].detach_())')
m('x = torch.ones(2, 3, requires_grad=True)', 'y = x * 1', 'o = y.unbind(0)', 'r = M(lambda: o[0].requires_grad_(False))')
m('x = torch.ones(2, 3, requires_grad=True)', 'y = x * 1', 'v = y[0]', 'r = M(lambda: v.requires_grad_(False))')
m('x = torch.ones(2, 3, requires_grad=True)', 'r = M(lambda: x[0].requires_grad_(False))')
m('x = torch.ones(2, 3, requires_grad=True)', 'y = x * 1', 'r = M(lambda: y.requires_grad_(False))')
m('x = torch.ones(2, 3, requires_grad=True)', 'y = x * 1', 'r = M(lambda: y.requires_grad_(True).is_leaf)')
m('x = torch.ones(2, 3)', 'r = M(lambda: (x.requires_grad_(True) is x, x.is_leaf, x.requires_grad_(False).requires_grad))')
m('x = torch.ones(2, 3)', 'v = x[0]', 'r = M(lambda: (v.requires_grad_(True).requires_grad, v.is_leaf, v._base is x, x.requires_grad))')
m('x = torch.ones(2, 3)', 'v = x[0]', 'v.requires_grad_()', 'r = M(lambda: x.mul_(2))', 'r = (r, M(lambda: v.grad_fn))')
m('x = torch.ones(2, 3)', 'v = x[0]', 'v.requires_grad_()', 'y = v * 2', 'r = M(lambda: x.mul_(2))', 'r = (r, M(lambda: y.sum().backward()), v.grad)')
m('x = torch.ones(2, 3)', 'y = torch.ones(3, requires_grad=True)', 'r = M(lambda: x[0].copy_(y))', 'r = (r, x.requires_grad, M(lambda: x.grad_fn.name()), x.is_leaf)')
m('x = torch.ones(2, 3)', 'y = torch.ones(3, requires_grad=True)', 'v = x[0]', 'v.mul_(y)', 'x.sum().backward()', 'r = (y.grad, v.grad_fn.name(), x.grad_fn.name())')
m('x = torch.ones(2, 3)', 'y = torch.ones(3, requires_grad=True)', 'v = x[0]', 'x.mul_(y)', 'r = M(lambda: (v.requires_grad, v.grad_fn.name()))')
m('x = torch.ones(2, 3)', 'y = torch.ones(3, requires_grad=True)', 'x.mul_(y)', 'x.sum().backward()', 'r = (y.grad, x.is_leaf)')
m('x = torch.ones(2, 3, dtype=torch.float64)', 'y = torch.ones(3, requires_grad=True)', 'x.mul_(y)', 'x.sum().backward()', 'r = (y.grad, x.grad_fn.name())')
m('x = torch.ones(2, 3)', 'y = torch.ones(3, requires_grad=True, dtype=torch.float64)', 'r = M(lambda: x.mul_(y))', 'r = (r, x.requires_grad)')
m('x = torch.ones(2, 3, dtype=torch.int64)', 'y = torch.ones(3, requires_grad=True)', 'r = M(lambda: x.add_(y))', 'r = (r, x.requires_grad)')
m('x = torch.ones(2, 3, dtype=torch.int64)', 'y = torch.ones(3, requires_grad=True)', 'r = M(lambda: x.copy_(y))', 'r = (r, x.requires_grad)')
m('x = torch.ones(2, 3, dtype=torch.int64)', 'y = torch.ones(3, requires_grad=True)', 'def f(): x[0] = y', 'r = M(f)', 'r = (r, x.requires_grad)')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.add(y, 1, out=torch.empty(3)))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.add(y.detach(), 1, out=y))')
m('y = torch.ones(3, requires_grad=True)', 'z = y * 1', 'r = M(lambda: torch.add(y, 1, out=z))')
m('y = torch.ones(3, requires_grad=True)', 'with torch.no_grad(): r = M(lambda: torch.add(y, 1, out=torch.empty(3)).requires_grad)')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.sum(y, 0, out=torch.empty(())))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.cat([y, y], out=torch.empty(6)))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.matmul(y, y, out=torch.empty(())))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.max(y, 0, out=(torch.empty(()), torch.empty((), dtype=torch.int64))))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.sort(y, out=(torch.empty(3), torch.empty(3, dtype=torch.int64))))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.exp(y, out=torch.empty(3)))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.argmax(y, out=torch.empty((), dtype=torch.int64)))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.eq(y, 1, out=torch.empty(3, dtype=torch.bool)))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.floor(y, out=torch.empty(3)))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.zeros(3, out=torch.empty(3, requires_grad=True)))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.randn(3, out=y).requires_grad)')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.linalg.inv(torch.eye(3), out=torch.empty(3, 3, requires_grad=True)))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.nn.functional.relu(y, inplace=True))')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.nn.functional.relu(y * 1, inplace=True).grad_fn.name())')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.nn.functional.dropout(y * 1, 0.5, True, True).grad_fn.name())')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.nn.functional.leaky_relu(y * 1, 0.1, True).grad_fn.name())')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.nn.functional.leaky_relu(y * 1, -0.1, True).sum().backward())')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.nn.functional.elu(y * 1, 1.0, True).sum().backward())', 'r = (r, y.grad)')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.nn.functional.elu(y * 1, -1.0, True).sum().backward())', 'r = (r, y.grad)')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.nn.functional.celu(y * 1, 1.0, True).sum().backward())', 'r = (r, y.grad)')
m('y = torch.ones(3, requires_grad=True)', 'r = M(lambda: torch.nn.functional.hardtanh(y * 1, 0, 0.5, True).sum().backward())', 'r = (r, y.grad)')
m('y = torch.tensor([-1., 2., 0.], requires_grad=True)', 'r = M(lambda: torch.nn.functional.rrelu(y * 1, training=False, inplace=True).sum().backward())', 'r = (r, y.grad)')
m('y = torch.tensor([-1., 2., 0.], requires_grad=True)', 'r = M(lambda: torch.nn.functional.threshold(y * 1, 0.5, 3., True).sum().backward())', 'r = (r, y.grad)')
m('y = torch.tensor([-1., 2., 0.], requires_grad=True)', 'z = y * 1', 'z.sigmoid_()', 'z.tanh_()', 'z.exp_()', 'z.sum().backward()', 'r = y.grad')
m('y = torch.tensor([-1., 2., 0.], requires_grad=True)', 'z = y * 1', 'z.pow_(2)', 'z.sqrt_()', 'z.div_(z.detach() + 1)', 'z.sum().backward()', 'r = y.grad')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = y * 1', 'z.addcmul_(y, y, value=2)', 'z.lerp_(y.exp(), 0.3)', 'z.clamp_(max=3)', 'z.sum().backward()', 'r = y.grad')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = y * 1', 'z.abs_()', 'z.atan2_(y)', 'z.fmod_(0.7)', 'z.sum().backward()', 'r = y.grad')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = y * 1', 'z.index_add_(0, torch.tensor([0, 0]), y[:2] * 3)', 'z.sum().backward()', 'r = y.grad')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = torch.zeros(2, 3)', 'z.index_copy_(0, torch.tensor([1]), y[None])', 'z.sum().backward()', 'r = y.grad')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = torch.zeros(3)', 'z.masked_scatter_(torch.tensor([True, False, True]), y)', '(z * torch.arange(3.)).sum().backward()', 'r = y.grad')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = y * 1', 'z.put_(torch.tensor([0, 0]), y[1:] * 2, accumulate=True)', 'z.sum().backward()', 'r = y.grad')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = y * 1', 'z.scatter_reduce_(0, torch.tensor([0, 0]), y[1:] * 2, "amax")', 'z.sum().backward()', 'r = y.grad')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = y * 1', 'z.t_()', 'z.unsqueeze_(1).transpose_(0, 1)', 'z.squeeze_(0)', 'z.sum().backward()', 'r = (y.grad, z.grad_fn.name())')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = y * 1', 'z.resize_as_(torch.ones(3))', 'r = M(lambda: z.sum().backward())', 'r = (r, y.grad)')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'z = y * 1', 'r = M(lambda: z.resize_(2))')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'r = M(lambda: y.resize_(3))')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'r = M(lambda: y.data_ptr() == y.detach().data_ptr())')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'import copy', 'r = M(lambda: (copy.deepcopy(y).requires_grad, copy.deepcopy(y).is_leaf, copy.copy(y).requires_grad))')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'import copy', 'r = M(lambda: copy.deepcopy(y * 2))')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'import pickle', 'r = M(lambda: pickle.loads(pickle.dumps(y)).requires_grad)')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'import pickle', 'r = M(lambda: pickle.loads(pickle.dumps(y * 2)).requires_grad)')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'b = io.BytesIO()', 'torch.save(y * 2, b)', 'b.seek(0)', 'r = M(lambda: torch.load(b).requires_grad)')
m('y = torch.tensor([-1., 2., 0.5], requires_grad=True)', 'b = io.BytesIO()', 'torch.save(y, b)', 'b.seek(0)', 'r = M(lambda: torch.load(b).requires_grad)')
m('y = torch.nn.Parameter(torch.ones(3))', 'r = M(lambda: (y.requires_grad, y.is_leaf, type(y * 2).__name__, type(y.detach()).__name__, type(y[0]).__name__, repr(y)))')
m('y = torch.nn.Parameter(torch.ones(3), requires_grad=False)', 'r = M(lambda: (y.requires_grad, y.is_leaf, repr(y)))')
m('r = M(lambda: torch.nn.Parameter(torch.ones(3, dtype=torch.int64)))')
m('r = M(lambda: torch.nn.Parameter(torch.ones(3, dtype=torch.int64), requires_grad=False).dtype)')
m('y = torch.nn.Parameter(torch.ones(3))', 'r = M(lambda: y.add_(1))')
m('y = torch.nn.Parameter(torch.ones(3))', 'with torch.no_grad(): y.add_(1)', 'r = (y._version, y.requires_grad, type(y).__name__)')
m('y = torch.nn.Parameter(torch.ones(3))', 'y.sum().backward()', 'r = (y.grad, type(y.grad).__name__)')
m('lin = torch.nn.Linear(2, 3)', 'r = M(lambda: (lin.weight.grad_fn, lin(torch.ones(2)).grad_fn.name()))')
m('lin = torch.nn.Linear(2, 3)', 'lin.requires_grad_(False)', 'r = M(lambda: lin(torch.ones(2)).requires_grad)')
m('lin = torch.nn.Linear(2, 3)', 'lin(torch.ones(4, 2)).sum().backward()', 'lin.zero_grad()', 'r = (lin.weight.grad, lin.bias.grad)')
m('lin = torch.nn.Linear(2, 3)', 'lin(torch.ones(4, 2)).sum().backward()', 'lin.zero_grad(set_to_none=False)', 'r = (lin.weight.grad, lin.bias.grad)')
m('lin = torch.nn.Linear(2, 3)', 'with torch.no_grad(): lin.weight.fill_(1.)', 'lin(torch.ones(4, 2)).sum().backward()', 'r = (lin.weight.grad, lin.bias.grad)')
m('lin = torch.nn.Linear(2, 3)', 'r = M(lambda: lin.weight.fill_(1.))')
m('lin = torch.nn.Linear(2, 3)', 'def f(): lin.weight = torch.ones(3, 2)', 'r = M(f)')
m('lin = torch.nn.Linear(2, 3)', 'def f(): lin.weight.data = torch.ones(3, 2)', 'r = (M(f), lin.weight.requires_grad, type(lin.weight).__name__)')
m('x = torch.ones(2, requires_grad=True)', 'y = torch.ones(2, requires_grad=True)', 'z = x * y', 'x.data.mul_(3)', 'z.sum().backward()', 'r = (x.grad, y.grad)')
m('x = torch.ones(2, requires_grad=True)', 'y = x * x', 'del x', 'y.sum().backward()', 'r = y.grad_fn.name()')
m('x = torch.ones(2, requires_grad=True)', 'y = x.exp()', 'y.sum().backward()', 'r = M(lambda: y.grad_fn._saved_result)')
m('x = torch.ones(2, requires_grad=True)', 'y = x * x', 'y.sum().backward()', 'r = M(lambda: y.grad_fn._saved_self)')
m('x = torch.ones(2, requires_grad=True, dtype=torch.float16)', 'r = M(lambda: ((x * x).sum().backward(), x.grad)[1])')
m('x = torch.ones(2, requires_grad=True, dtype=torch.bfloat16)', 'r = M(lambda: ((x * x).sum().backward(), x.grad)[1])')
m('x = torch.ones(2, requires_grad=True)', 'r = M(lambda: ((x.double() * x).sum().backward(), x.grad, x.grad.dtype)[1:])')
m('x = torch.ones(2, requires_grad=True)', 'r = M(lambda: ((x.half() * 3).sum().backward(), x.grad, x.grad.dtype)[1:])')
m('x = torch.ones(2, requires_grad=True)', 'r = M(lambda: ((x.long() * 3).sum().backward(), x.grad))')
m('x = torch.ones(2, requires_grad=True)', 'r = M(lambda: ((x.expand(3, 2) * 3).sum().backward(), x.grad)[1])')
m('x = torch.ones((), requires_grad=True)', 'r = M(lambda: ((x.expand(3, 2) * 3).sum().backward(), x.grad)[1])')
m('x = torch.ones(1, requires_grad=True)', 'r = M(lambda: ((x + torch.ones(2, 3)).sum().backward(), x.grad)[1])')
m('x = torch.ones((), requires_grad=True)', 'r = M(lambda: (x.backward(), x.grad)[1])')
m('x = torch.ones((), requires_grad=True)', 'r = M(lambda: (x.backward(torch.tensor(3.)), x.grad)[1])')
m('x = torch.ones(0, requires_grad=True)', 'r = M(lambda: (x.sum().backward(), x.grad)[1])')
m('x = torch.ones(0, 3, requires_grad=True)', 'r = M(lambda: (x.max(0)))')
m('x = torch.ones(0, 3, requires_grad=True)', 'r = M(lambda: (x.mean().backward(), x.grad)[1])')
m('x = torch.ones(2, 3, requires_grad=True)', 'r = M(lambda: (x.t().contiguous().view(-1).sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(2, 3, requires_grad=True)', 'r = M(lambda: (x.t().sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(3, 2, requires_grad=True).t()', 'r = M(lambda: x.is_leaf)')
m('x = torch.ones(3, 2).t().requires_grad_()', 'r = M(lambda: ((x * 2).sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(3, 2).t().requires_grad_()', 'r = M(lambda: ((x.exp()).sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(3, 2).t().requires_grad_()', 'r = M(lambda: ((x @ torch.ones(3, 2)).sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(6)[::2].requires_grad_()', 'r = M(lambda: ((x * 2).sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(1, 3).expand(2, 3).requires_grad_()', 'r = M(lambda: ((x * 2).sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(2, 3, 4).permute(2, 0, 1).requires_grad_()', 'r = M(lambda: ((x * 2).sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(2, 3, 4, 5).contiguous(memory_format=torch.channels_last).requires_grad_()', 'r = M(lambda: ((x * 2).sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(2, 3, 4, 5).contiguous(memory_format=torch.channels_last).requires_grad_()', 'r = M(lambda: (torch.nn.functional.conv2d(x, torch.ones(2, 3, 1, 1)).sum().backward(), x.grad.stride())[1])')
m('x = torch.ones(2, 3, requires_grad=True)', 'g = torch.ones(3, 2).t()', 'r = M(lambda: ((x * 2).backward(g), x.grad.stride())[1])')
m('x = torch.ones(2, 3, requires_grad=True)', 'g = torch.ones(3, 2).t()', 'r = M(lambda: ((x * 1).backward(g), x.grad.stride())[1])')
m('x = torch.ones(2, 3, requires_grad=True)', 'g = torch.ones(3, 2).t()', 'r = M(lambda: (x.backward(g), x.grad.stride())[1])')
m('x = torch.ones(2, 3, requires_grad=True)', 'g = torch.ones(3, 2).t()', 'r = M(lambda: (x.backward(g), x.grad.stride(), x.grad.data_ptr() == g.data_ptr())[1:])')
m('x = torch.ones(2, 3, requires_grad=True)', 'g = torch.ones(2, 3)', 'r = M(lambda: (x.backward(g), x.grad.data_ptr() == g.data_ptr())[1])')
m('x = torch.ones(2, 3, requires_grad=True)', 'r = M(lambda: (torch.autograd.grad(x.sum(), x)[0].stride()))')
m('x = torch.ones(2, 3, requires_grad=True)', 'r = M(lambda: (torch.autograd.grad(x.t().sum(), x)[0].stride()))')
m('x = torch.ones(2, 3, requires_grad=True)', 'r = M(lambda: torch.autograd.grad(x * 2, x, torch.ones(3, 2).t())[0].stride())')



# Real-program patterns: checkpoint, module backward hooks, gradient penalty, clip_grad_norm_, .grad edits.
def more():
    out = []

    def p(*lines):
        out.append('⏎'.join(('from h9 import *', PRE) + lines))
    MLP = ('m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).double()⏎'
           'for k, q in enumerate(m.parameters()):⏎    q.data = torch.tensor(A(*q.shape, seed=60 + k))')
    p(MLP, 'x = T(5, 3, seed=1)', 'y = torch.utils.checkpoint.checkpoint(m, x)', 'y.sum().backward()',
      'r = (x.grad, [q.grad for q in m.parameters()])')
    p(MLP, 'x = T(5, 3, seed=1)', 'y = torch.utils.checkpoint.checkpoint(m, x, use_reentrant=False)', 'y.sum().backward()',
      'r = (x.grad, [q.grad for q in m.parameters()])')
    p(MLP, 'x = T(5, 3, seed=1)', 'y = torch.utils.checkpoint.checkpoint_sequential(m, 2, x)', 'y.sum().backward()',
      'r = (x.grad, [q.grad for q in m.parameters()])')
    p(MLP, 'x = T(5, 3, seed=1)', 'seen = []',
      'm[0].register_full_backward_hook(lambda mod, gi, go: seen.append((len(gi), len(go), go[0].shape, gi[0] is None)))',
      'm(x).sum().backward()', 'r = seen')
    p(MLP, 'x = T(5, 3, seed=1)', 'm[2].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0,))',
      'm(x).sum().backward()', 'r = (x.grad, [q.grad for q in m.parameters()])')
    p(MLP, 'x = T(5, 3, seed=1)', 'seen = []', 'm[1].register_full_backward_pre_hook(lambda mod, go: seen.append(go[0].shape))' ,
      'm(x).sum().backward()', 'r = seen')
    p(MLP, 'x = T(5, 3, seed=1)', 'seen = []', 'm[0].register_backward_hook(lambda mod, gi, go: seen.append(len(gi)))',
      'r = M(lambda: (m(x).sum().backward(), seen)[1])')
    # gradient penalty (WGAN-GP): grad of the output w.r.t. the input, create_graph, then backward to the weights
    p(MLP, 'x = T(5, 3, seed=1)', 'out = m(x)', 'g, = torch.autograd.grad(out.sum(), x, create_graph=True)',
      'pen = ((g.norm(2, dim=1) - 1) ** 2).mean()', 'pen.backward()', 'r = (g, [q.grad for q in m.parameters()], x.grad)')
    p(MLP, 'x = T(5, 3, seed=1)', 'out = m(x)',
      'g, = torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out), create_graph=True, retain_graph=True)',
      'loss = out.mean() + (g ** 2).sum()', 'loss.backward()', 'r = [q.grad for q in m.parameters()]')
    p(MLP, 'x = T(5, 3, seed=1)', 'm(x).sum().backward()',
      'n = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5)', 'r = (n, [q.grad for q in m.parameters()])')
    p(MLP, 'x = T(5, 3, seed=1)', 'm(x).sum().backward()',
      'n = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5, norm_type=float("inf"))', 'r = (n, [q.grad for q in m.parameters()])')
    p(MLP, 'x = T(5, 3, seed=1)', 'm(x).sum().backward()', 'torch.nn.utils.clip_grad_value_(m.parameters(), 0.1)',
      'r = [q.grad for q in m.parameters()]')
    p(MLP, 'x = T(5, 3, seed=1)', 'm(x).sum().backward()', 'for q in m.parameters(): q.grad.data.zero_()',
      'm(x).sum().backward()', 'r = [q.grad for q in m.parameters()]')
    p(MLP, 'x = T(5, 3, seed=1)', 'm(x).sum().backward()', 'for q in m.parameters():⏎    q.grad.detach_()⏎    q.grad.zero_()',
      'm(x).sum().backward()', 'r = [q.grad for q in m.parameters()]')
    p(MLP, 'x = T(5, 3, seed=1)', 'opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)',
      'for _ in range(3):⏎    opt.zero_grad()⏎    m(x).pow(2).sum().backward()⏎    opt.step()', 'r = [q for q in m.parameters()]')
    p(MLP, 'x = T(5, 3, seed=1)', 'opt = torch.optim.Adam(m.parameters(), lr=0.01)',
      'for _ in range(3):⏎    opt.zero_grad()⏎    m(x).pow(2).sum().backward()⏎    opt.step()', 'r = [q for q in m.parameters()]')
    p(MLP, 'x = T(5, 3, seed=1)', 'opt = torch.optim.SGD(m.parameters(), lr=0.1)', 'opt.zero_grad()',
      'r = [q.grad for q in m.parameters()]')
    p(MLP, 'x = T(5, 3, seed=1)', 'm(x).sum().backward()', 'opt = torch.optim.SGD(m.parameters(), lr=0.1)', 'opt.zero_grad()',
      'r = [q.grad for q in m.parameters()]')
    p(MLP, 'x = T(5, 3, seed=1)', 'm(x).sum().backward()', 'opt = torch.optim.SGD(m.parameters(), lr=0.1)',
      'opt.zero_grad(set_to_none=True)', 'r = [q.grad for q in m.parameters()]')
    # hessian-vector products through an MLP
    p(MLP, 'x = T(5, 3, seed=1)', 'ps = list(m.parameters())', 'L = m(x).pow(2).sum()',
      'gs = torch.autograd.grad(L, ps, create_graph=True)', 'v = [torch.tensor(A(*q.shape, seed=70 + i)) for i, q in enumerate(ps)]',
      'hv = torch.autograd.grad(sum((g * w).sum() for g, w in zip(gs, v)), ps)', 'r = hv')
    p(MLP, 'x = T(5, 3, seed=1)', 'r = torch.autograd.functional.hessian(lambda a: m(a).sum(), x[0].detach())')
    p(MLP, 'x = T(5, 3, seed=1)', 'r = torch.autograd.functional.jacobian(m, x[:2].detach())')
    p(MLP, 'x = T(5, 3, seed=1)', 'r = torch.autograd.functional.vjp(m, x.detach(), torch.ones(5, 1, dtype=torch.float64))')
    p(MLP, 'x = T(5, 3, seed=1)', 'r = torch.autograd.functional.jvp(m, x.detach(), torch.ones(5, 3, dtype=torch.float64))')
    p(MLP, 'x = T(5, 3, seed=1)', 'r = torch.autograd.functional.hvp(lambda a: m(a).sum(), x.detach(), torch.ones(5, 3, dtype=torch.float64))')
    # one-element non-scalar outputs, detach().requires_grad_(), grads through no_grad pieces
    p('x = T(3, seed=1)', 'y = (x * 2).sum().reshape(1)', 'r = M(lambda: (y.backward(), x.grad)[1])')
    p('x = T(3, seed=1)', 'y = (x * 2).sum().reshape(1, 1)', 'r = M(lambda: (y.backward(), x.grad)[1])')
    p('x = T(3, seed=1)', 'z = (x * 2).detach().requires_grad_()', 'w = (z * z).sum()', 'w.backward()', 'r = (z.grad, x.grad, z.is_leaf)')
    p('x = T(3, seed=1)', 'with torch.no_grad():⏎    s = x.sum()', 'y = x * s', 'y.sum().backward()', 'r = (x.grad, s.requires_grad)')
    p('x = T(3, seed=1)', 'y = x * 2', 'y.detach_()', 'r = (y.requires_grad, y.is_leaf, y.grad_fn)')
    p('x = T(3, seed=1)', 'y = x.clone()', 'y[0] = y[1] * y[2]', 'y.sum().backward()', 'r = x.grad')
    p('x = T(3, seed=1)', 'y = x.clone()', 'y[1:] = y[:2] * 3', 'y.sum().backward()', 'r = x.grad')
    p('x = T(3, 3, seed=1)', 'y = x.clone()', 'y.diagonal().copy_(torch.zeros(3))', 'y.triu_()', 'y.sum().backward()', 'r = x.grad')
    p('x = T(3, 3, seed=1)', 'y = x * 1', 'y.t_()', 'y[0].mul_(y[1])', 'y.sum().backward()', 'r = x.grad')
    p('x = T(4, seed=1)', 'y = x * 1', 'y.view(2, 2)[0].add_(y.view(2, 2)[1])', 'y.sum().backward()', 'r = x.grad')
    p('x = T(4, seed=1)', 'y = x.exp()', 'z = y * 1', 'y.add_(1)', 'r = M(lambda: (z.sum().backward(), x.grad)[1])')
    p('x = T(4, seed=1)', 'y = x.exp()', 'z = y.sin()', 'y.add_(1)', 'r = M(lambda: (z.sum().backward(), x.grad)[1])')
    p('x = T(4, seed=1)', 'y = x.sigmoid()', 'z = y[:2]', 'y.mul_(2)', 'r = M(lambda: (z.sum().backward(), x.grad)[1])')
    p('x = T(4, seed=1)', 'y = x.sigmoid()', 'z = y[:2]', 'z.mul_(2)', 'r = M(lambda: (y.sum().backward(), x.grad)[1])')
    p('x = T(4, seed=1)', 'y = x.tanh()', 'z = y[:2]', 'z.mul_(2)', 'r = M(lambda: (y.sum().backward(), x.grad)[1])')
    p('x = T(4, seed=1)', 'y = x.relu()', 'y.mul_(2)', 'r = M(lambda: (y.sum().backward(), x.grad)[1])')
    p('x = T(4, seed=1)', 'y = torch.nn.functional.relu(x * 1, inplace=True)', 'y.mul_(2)', 'r = M(lambda: (y.sum().backward(), x.grad)[1])')
    p('x = T(4, seed=1)', 'y = torch.nn.functional.relu(x * 1, inplace=True)', 'z = y.exp()', 'y.relu_()', 'r = M(lambda: (z.sum().backward(), x.grad)[1])')
    p('x = T(4, seed=1)', 'y = x.pow(2)', 'y.exp_()', 'r = M(lambda: (y.sum().backward(), x.grad)[1])')
    p('x = T(4, seed=1)', 'y = x.pow(2)', 'w = y.exp()', 'y.exp_()', 'r = M(lambda: (w.sum().backward(), x.grad)[1])')
    return out


S.extend(more())


if __name__ == '__main__':
    for line in S:
        print(line)
