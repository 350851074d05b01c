"""Tensor subclasses and the __torch_function__ protocol, compared with torch: each case runs the same
code with `torch` and with `kiln` (the `lib` argument) and compares result types, values, the funcs a
recording __torch_function__ saw, and exception types. Where torch 1.13 (the oracle installed here)
differs from torch 2.x, kiln follows 2.x and the case says so."""
import copy
import pickle

import pytest
import torch

import kiln

LIBS = (torch, kiln)
# torch 2.x's name for the guard the default __torch_function__ uses (1.13: DisableTorchFunction)
_ALIASES = {"__rdiv__": "__rtruediv__"}


def _disable_subclass(lib):
    return getattr(lib._C, "DisableTorchFunctionSubclass", None) or lib._C.DisableTorchFunction


def fname(lib, func):
    """A library-neutral name for a `func` given to __torch_function__: 'Tensor.add', 'Tensor.grad.__get__',
    'add' (torch.add), 'F.relu', 'linalg.norm'."""
    T = lib.Tensor
    name = getattr(func, "__name__", None)
    if name in ("__get__", "__set__", "__delete__"):
        owner = func.__self__
        props = [n for n in dir(T) if T.__dict__.get(n, None) is owner or getattr(T, n, None) is owner]
        return f"Tensor.{_ALIASES.get(min(props), min(props))}.{name}"
    for prefix, ns in (("", lib), ("F.", lib.nn.functional), ("linalg.", lib.linalg), ("special.", lib.special)):
        if name and getattr(ns, name, None) is func:
            return prefix + name
        names = [n for n, v in vars(ns).items() if v is func and not n.startswith("_")]
        if names:  # torch.linalg.norm's __name__ is linalg_norm
            return prefix + min(names)
    candidates = [n for n in dir(T) if getattr(T, n, None) is func]
    if candidates:
        n = name if name in candidates else min(candidates)
        return "Tensor." + _ALIASES.get(n, n)
    return repr(func)


def recording(lib):
    """A subclass whose __torch_function__ logs each func and defers to the default."""
    log = []

    class Rec(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((fname(lib, func), tuple(t.__name__ for t in types)))
            return super().__torch_function__(func, types, args, kwargs)
    return Rec, log


def tname(x):
    """The type name of x, or of its elements (tuples, lists, return types)."""
    if isinstance(x, (tuple, list)):
        return type(x).__name__ if type(x) in (tuple, list) else "structseq", [tname(e) for e in x]
    return type(x).__name__


def both(case):
    return case(torch), case(kiln)


def data(lib):
    return lib.tensor([1.0, -2.0, 3.0])


# ---- 1. results of ops on a subclass instance keep the subclass ----

OPS = {
    "x + 1": lambda lib, x, y: x + 1,
    "1 + x": lambda lib, x, y: 1 + x,
    "y + x": lambda lib, x, y: y + x,
    "x - y": lambda lib, x, y: x - y,
    "y - x": lambda lib, x, y: y - x,
    "x * 2": lambda lib, x, y: x * 2,
    "x / 2": lambda lib, x, y: x / 2,
    "2 / x": lambda lib, x, y: 2 / x,
    "x ** 2": lambda lib, x, y: x ** 2,
    "-x": lambda lib, x, y: -x,
    "abs(x)": lambda lib, x, y: abs(x),
    "x > 0": lambda lib, x, y: x > 0,
    "x == y": lambda lib, x, y: x == y,
    "x @ y": lambda lib, x, y: x @ y,
    "add": lambda lib, x, y: lib.add(x, 1),
    "add(y, x)": lambda lib, x, y: lib.add(y, x),
    "mul kw": lambda lib, x, y: lib.mul(input=x, other=y),
    "sum": lambda lib, x, y: x.sum(),
    "x[0]": lambda lib, x, y: x[0],
    "x[1:]": lambda lib, x, y: x[1:],
    "view": lambda lib, x, y: x.view(3),
    "reshape": lambda lib, x, y: x.reshape(1, 3),
    "cat": lambda lib, x, y: lib.cat([x, y]),
    "cat plain first": lambda lib, x, y: lib.cat([y, x]),
    "stack": lambda lib, x, y: lib.stack((y, x)),
    "clone": lambda lib, x, y: x.clone(),
    "detach": lambda lib, x, y: x.detach(),
    "to dtype": lambda lib, x, y: x.to(lib.float64),
    "double": lambda lib, x, y: x.double(),
    "max(0)": lambda lib, x, y: x.max(0),
    "torch.max(x, 0)": lambda lib, x, y: lib.max(x, 0),
    "sort": lambda lib, x, y: x.sort(),
    "unbind": lambda lib, x, y: x.unbind(),
    "split": lambda lib, x, y: x.split(1),
    "chunk": lambda lib, x, y: lib.chunk(x, 3),
    "F.relu": lambda lib, x, y: lib.nn.functional.relu(x),
    "F.softmax": lambda lib, x, y: lib.nn.functional.softmax(x, 0),
    "F.linear": lambda lib, x, y: lib.nn.functional.linear(x, lib.ones(2, 3)),
    "exp": lambda lib, x, y: lib.exp(x),
    "where": lambda lib, x, y: lib.where(x > 0, x, y),
    "shape": lambda lib, x, y: x.shape,
    "size": lambda lib, x, y: x.size(),
    "dtype": lambda lib, x, y: str(x.dtype).split(".")[1],
    "tolist": lambda lib, x, y: x.tolist(),
    "item": lambda lib, x, y: x.sum().item(),
    "numel": lambda lib, x, y: x.numel(),
    "dim": lambda lib, x, y: x.dim(),
    "len": lambda lib, x, y: len(x),
    "bool": lambda lib, x, y: bool(x[0]),
    "float": lambda lib, x, y: float(x[0]),
    "iter": lambda lib, x, y: list(x),
    "grad": lambda lib, x, y: x.grad,
    "is_leaf": lambda lib, x, y: x.is_leaf,
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_results_keep_the_subclass(op):
    def case(lib):
        class MyT(lib.Tensor):
            pass
        x = data(lib).as_subclass(MyT)
        y = lib.tensor([0.5, 0.5, -1.0])
        r = OPS[op](lib, x, y)
        vals = r.tolist() if isinstance(r, lib.Tensor) else \
            [e.tolist() if isinstance(e, lib.Tensor) else e for e in r] if isinstance(r, (tuple, list)) else r
        return tname(r), vals
    t, k = both(case)
    assert k == t


def test_in_place_ops_return_self():
    def case(lib):
        class MyT(lib.Tensor):
            pass
        x = data(lib).as_subclass(MyT)
        out = []
        for f in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.clamp_(min=0), lambda: x.zero_()):
            r = f()
            out.append((r is x, type(r).__name__))
        x += 1
        out.append((type(x).__name__, x.tolist()))
        return out
    t, k = both(case)
    assert k == t


def test_construction():
    def case(lib):
        class MyT(lib.Tensor):
            pass
        plain = data(lib)
        a = plain.as_subclass(MyT)
        b = MyT([1.0, 2.0])
        c = lib.Tensor._make_subclass(MyT, plain, True)
        return [(type(v).__name__, isinstance(v, lib.Tensor), type(v) is MyT, v.requires_grad, v.tolist())
                for v in (a, b, c)], plain.requires_grad
    t, k = both(case)
    assert k == t


def test_subclass_of_subclass_and_attributes():
    def case(lib):
        class A(lib.Tensor):
            def double_it(self):
                return self * 2

        class B(A):
            pass
        x = data(lib).as_subclass(B)
        x.tag = "hello"
        r = x.double_it()
        return type(r).__name__, r.tolist(), x.tag, getattr(r, "tag", None), type(x + x).__name__
    t, k = both(case)
    assert k == t


# ---- 2. an overriding __torch_function__ sees every call ----

CALLS = {
    "x + 1": lambda lib, r, y: r + 1,
    "1 + x": lambda lib, r, y: 1 + r,
    "y + x": lambda lib, r, y: y + r,
    "x - 1": lambda lib, r, y: r - 1,
    "1 - x": lambda lib, r, y: 1 - r,
    "x * y": lambda lib, r, y: r * y,
    "x / 2": lambda lib, r, y: r / 2,
    "x ** 2": lambda lib, r, y: r ** 2,
    "x < 1": lambda lib, r, y: r < 1,
    "-x": lambda lib, r, y: -r,
    "torch.add": lambda lib, r, y: lib.add(r, 1),
    "torch.add kw": lambda lib, r, y: lib.add(r, other=y, alpha=2),
    "x.add": lambda lib, r, y: r.add(1),
    "x.add_": lambda lib, r, y: r.add_(1),
    "x += 1": lambda lib, r, y: r.__iadd__(1),
    "F.relu": lambda lib, r, y: lib.nn.functional.relu(r),
    "F.linear": lambda lib, r, y: lib.nn.functional.linear(r, lib.ones(2, 3)),
    "F.softmax": lambda lib, r, y: lib.nn.functional.softmax(r, 0),
    "x.grad": lambda lib, r, y: r.grad,
    "x.shape": lambda lib, r, y: r.shape,
    "x.requires_grad": lambda lib, r, y: r.requires_grad,
    "x.dtype": lambda lib, r, y: r.dtype,
    "x.data": lambda lib, r, y: r.data,
    "x[0]": lambda lib, r, y: r[0],
    "x[0] = 1": lambda lib, r, y: r.__setitem__(0, 1.0),
    "x.sum().item()": lambda lib, r, y: r.sum().item(),
    "x.max(0)": lambda lib, r, y: r.max(0),
    "cat": lambda lib, r, y: lib.cat([r, y]),
    "stack": lambda lib, r, y: lib.stack([y, r]),
    "repr": lambda lib, r, y: repr(r),
    "len": lambda lib, r, y: len(r),
    "x.view": lambda lib, r, y: r.view(3),
    "x.clone": lambda lib, r, y: r.clone(),
    "x.detach": lambda lib, r, y: r.detach(),
    "x.tolist": lambda lib, r, y: r.tolist(),
    "x.requires_grad = True": lambda lib, r, y: setattr(r, "requires_grad", True),
    "linalg.norm": lambda lib, r, y: lib.linalg.norm(r),
    "special.expit": lambda lib, r, y: lib.special.expit(r),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_override_sees_public_funcs(call):
    def case(lib):
        Rec, log = recording(lib)
        r = data(lib).as_subclass(Rec)
        y = lib.tensor([0.5, 0.5, -1.0])
        result = CALLS[call](lib, r, y)
        return log, tname(result)
    t, k = both(case)
    assert k == t


def test_not_implemented_everywhere_raises_type_error():
    def case(lib):
        class No(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        x = data(lib).as_subclass(No)
        out = []
        for f in (lambda: lib.add(x, 1), lambda: x.add(1), lambda: lib.nn.functional.relu(x), lambda: x.shape):
            with pytest.raises(Exception) as e:
                f()
            out.append(e.type.__name__)
        return out
    t, k = both(case)
    assert k == t == ["TypeError"] * 4


def test_types_lists_the_overriding_types_subclasses_first():
    def case(lib):
        seen = []

        class A(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append((cls.__name__, [t.__name__ for t in types]))
                return super().__torch_function__(func, types, args, kwargs)

        class B(A):
            pass
        a = data(lib).as_subclass(A)
        b = data(lib).as_subclass(B)
        r1 = lib.add(a, b)
        r2 = lib.cat([b, a, b])
        return seen, type(r1).__name__, type(r2).__name__
    t, k = both(case)
    assert k == t


def test_unrelated_subclasses_return_not_implemented():
    def case(lib):
        class A(lib.Tensor):
            pass

        class B(lib.Tensor):
            pass
        a = data(lib).as_subclass(A)
        b = data(lib).as_subclass(B)
        with pytest.raises(Exception) as e:
            lib.add(a, b)
        return e.type.__name__
    t, k = both(case)
    assert k == t == "TypeError"


def test_no_recursion_under_the_guard():
    def case(lib):
        log = []

        class G(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(fname(lib, func))
                with _disable_subclass(lib)():
                    # calls made here (methods, functions, properties) are not dispatched again
                    a = args[0]
                    _ = a.shape, a.sum(), lib.add(a, 1), a + 1
                    out = func(*args, **(kwargs or {}))
                return out
        x = data(lib).as_subclass(G)
        r = lib.mul(x, 2)
        s = x.exp()
        return log, type(r).__name__, type(s).__name__
    t, k = both(case)
    assert k == t


def test_unwrapping_subclass_with_state():
    """The common wrapper pattern: __torch_function__ unwraps to plain tensors, calls func, rewraps."""
    def case(lib):
        class Tagged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                tags = {a.tag for a in args if isinstance(a, Tagged) and hasattr(a, "tag")}
                with _disable_subclass(lib)():
                    out = func(*args, **kwargs)
                if isinstance(out, lib.Tensor) and not isinstance(out, Tagged):
                    out = out.as_subclass(Tagged)
                    out.tag = "+".join(sorted(tags))
                return out
        x = data(lib).as_subclass(Tagged)
        x.tag = "a"
        y = data(lib).as_subclass(Tagged)
        y.tag = "b"
        z = x * y + 1
        return type(z).__name__, z.tag, z.tolist()
    t, k = both(case)
    assert k == t


# ---- 3. tensor-likes and modes ----

def test_tensor_like_objects():
    def case(lib):
        calls = []

        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append((fname(lib, func), [t.__name__ for t in types], len(args)))
                return "handled"
        like = Like()
        out = [lib.add(like, 1), lib.cat([lib.ones(1), like]), lib.nn.functional.relu(like), lib.exp(input=like),
               lib.overrides.is_tensor_like(like), lib.overrides.is_tensor_like(lib.ones(1)),
               lib.overrides.is_tensor_like(1.0), lib.overrides.has_torch_function((like,)),
               lib.overrides.has_torch_function((lib.ones(1), 2)),
               lib.overrides.has_torch_function((data(lib).as_subclass(type("S", (lib.Tensor,), {})),))]
        return calls, out
    t, k = both(case)
    assert k == t


def test_handle_torch_function_in_python_functions():
    def case(lib):
        seen = []

        def my_func(a, b=1):
            if lib.overrides.has_torch_function((a,)):
                return lib.overrides.handle_torch_function(my_func, (a,), a, b=b)
            return a + b

        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append((func is my_func, args[1:], kwargs))
                return 42
        return my_func(Like(), b=3), seen, my_func(lib.ones(1)).tolist()
    t, k = both(case)
    assert k == t


def test_torch_function_mode():
    def case(lib):
        log = []

        class Mode(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(fname(lib, func))
                return func(*args, **(kwargs or {}))
        x = data(lib)
        with Mode():
            a = lib.add(x, 1)
            b = lib.nn.functional.relu(x)
            c = lib.cat([x, x])
        d = lib.mul(x, 2)  # after the mode: not seen
        return log, [v.tolist() for v in (a, b, c, d)]
    t, k = both(case)
    assert k == t


def test_mode_returning_not_implemented_and_nested_modes():
    def case(lib):
        log = []

        class Outer(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append("outer " + fname(lib, func))
                return func(*args, **(kwargs or {}))

        class Inner(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append("inner " + fname(lib, func))
                return func(*args, **(kwargs or {}))

        class Refuse(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented
        x = data(lib)
        with Outer(), Inner():
            r = lib.exp(x)
        with pytest.raises(Exception) as e:
            with Refuse():
                lib.exp(x)
        return log, r.tolist(), e.type.__name__
    t, k = both(case)
    assert k == t


# ---- 4. Parameter, pickling, deepcopy, autograd ----

def test_parameter_results_are_plain_tensors():
    def case(lib):
        p = lib.nn.Parameter(data(lib))
        return [type(v).__name__ for v in (p, p + 1, p * p, p.detach(), lib.exp(p), p.sum(), p[0])], \
            isinstance(p, lib.nn.Parameter), p.requires_grad
    t, k = both(case)
    assert k == t


def test_parameter_of_a_subclass_keeps_the_subclass():
    # torch 2.x (and 1.13): the instance keeps its class and counts as a Parameter
    def case(lib):
        class MyT(lib.Tensor):
            pass
        p = lib.nn.Parameter(data(lib).as_subclass(MyT))
        m = lib.nn.Module()
        m.w = p
        return (type(p).__name__, isinstance(p, lib.nn.Parameter), isinstance(p, MyT), p.requires_grad, p.is_leaf,
                [type(q).__name__ for q in m.parameters()], type(p + 1).__name__)
    t, k = both(case)
    assert k == t


def test_module_with_subclass_parameter_trains():
    def case(lib):
        class MyT(lib.Tensor):
            pass
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[0.1, 0.2, 0.3], [-0.1, 0.0, 0.5]]))
            lin.bias.zero_()
        x = data(lib).as_subclass(MyT)
        out = lin(x)
        out.sum().backward()
        return type(out).__name__, [round(v, 5) for v in out.tolist()], lin.weight.grad.tolist()
    t, k = both(case)
    assert k == t


def test_autograd_through_subclass_results():
    def case(lib):
        class MyT(lib.Tensor):
            pass
        x = data(lib).as_subclass(MyT).requires_grad_()
        y = (x * x).sum()
        y.backward()
        return type(x).__name__, x.is_leaf, type(y).__name__, type(y.grad_fn).__name__ != "NoneType", \
            type(x.grad).__name__, x.grad.tolist()
    t, k = both(case)
    assert k == t


class PickledT(kiln.Tensor):
    pass


class TorchPickledT(torch.Tensor):
    pass


def test_pickle_keeps_class_and_attributes():
    # torch 2.x: the class and __dict__ come back (torch 1.13 on Python 3.11 fails in _rebuild_from_type_v2)
    x = kiln.tensor([1.0, 2.0]).as_subclass(PickledT)
    x.note = {"a": 1}
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is PickledT and y.note == {"a": 1} and y.tolist() == [1.0, 2.0]
    assert not y.requires_grad
    p = kiln.nn.Parameter(kiln.ones(2))
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is kiln.nn.Parameter and q.requires_grad


def test_deepcopy_keeps_class_and_attributes():
    # torch 2.x: deepcopy of a subclass instance keeps its class and deep-copies __dict__ (torch 1.13
    # refuses subclasses without new_empty)
    x = kiln.tensor([1.0, 2.0]).as_subclass(PickledT)
    x.note = [1, 2]
    y = copy.deepcopy(x)
    assert type(y) is PickledT and y.note == [1, 2] and y.note is not x.note and y.tolist() == [1.0, 2.0]
    y.add_(1)
    assert x.tolist() == [1.0, 2.0]
    a = kiln.tensor([1.0]).as_subclass(PickledT)
    b, c = copy.deepcopy([a, a])
    assert b is c


def test_disabled_torch_function_impl():
    def case(lib):
        class Plain(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl
        x = data(lib).as_subclass(Plain)
        calls = lib._C._disabled_torch_function_impl(lib.add, (), (x, 1), {})
        return type(x).__name__, type(x + 1).__name__, type(lib.add(x, 1)).__name__, type(x.sum()).__name__, \
            type(calls).__name__
    t, k = both(case)
    assert k == t


def test_plain_tensors_are_not_dispatched():
    def case(lib):
        x = data(lib)
        return (lib.overrides.has_torch_function((x, 1, [x])), type(x + 1).__name__, type(lib.add(x, x)).__name__,
                lib._C._is_torch_function_enabled())
    t, k = both(case)
    assert k == t


OPERATORS = ["__abs__", "__add__", "__and__", "__bool__", "__eq__", "__float__", "__floordiv__", "__ge__",
             "__getitem__", "__gt__", "__iadd__", "__iand__", "__ifloordiv__", "__ilshift__", "__imod__", "__imul__",
             "__index__", "__int__", "__invert__", "__ior__", "__ipow__", "__irshift__", "__isub__", "__ixor__",
             "__le__", "__len__", "__lshift__", "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__",
             "__or__", "__pos__", "__pow__", "__radd__", "__rand__", "__rfloordiv__", "__rlshift__", "__rmatmul__",
             "__rmod__", "__rmul__", "__ror__", "__rpow__", "__rrshift__", "__rshift__", "__rsub__", "__rtruediv__",
             "__rxor__", "__setitem__", "__sub__", "__truediv__", "__xor__", "__contains__", "__format__"]


@pytest.mark.parametrize("name", OPERATORS)
def test_operator_funcs(name):
    """Which func each operator reports (torch's C-level operators report the method: + is Tensor.add)."""
    def case(lib):
        Rec, log = recording(lib)
        r = lib.tensor([3], dtype=lib.int64).as_subclass(Rec)
        args = {"__matmul__": (lib.ones(1, dtype=lib.int64),), "__rmatmul__": (lib.ones(1, dtype=lib.int64),),
                "__getitem__": (0,), "__setitem__": (0, 1), "__contains__": (3,), "__format__": ("",)}.get(name)
        if args is None:
            unary = ("__abs__", "__bool__", "__float__", "__index__", "__int__", "__invert__", "__len__", "__neg__",
                     "__pos__")
            args = () if name in unary else (2,)
        if name == "__rmatmul__":  # as Python reaches it: the plain tensor on the left
            result = lib.ones(1, dtype=lib.int64) @ r
        else:
            result = getattr(r, name)(*args)
        return log, tname(result), result.tolist() if isinstance(result, lib.Tensor) else result
    t, k = both(case)
    assert k == t


def test_subclass_methods_calling_super():
    """A subclass's own operator calling super() still runs the protocol (torch's methods check it)."""
    def case(lib):
        log = []

        class Loud(lib.Tensor):
            def __add__(self, other):
                log.append("Loud.__add__")
                return super().__add__(other)

            def sum(self, *args, **kwargs):
                log.append("Loud.sum")
                return super().sum(*args, **kwargs)

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(fname(lib, func))
                return super().__torch_function__(func, types, args, kwargs)
        x = data(lib).as_subclass(Loud)
        a = x + 1
        b = x.sum()
        return log, type(a).__name__, type(b).__name__, a.tolist(), b.item()
    t, k = both(case)
    assert k == t


def test_parameter_subclass_with_the_protocol_back_on():
    def case(lib):
        class P(lib.nn.Parameter):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return lib.Tensor.__torch_function__.__func__(cls, func, types, args, kwargs)
        p = P(data(lib))
        return type(p).__name__, type(p * 2).__name__, type(lib.exp(p)).__name__, isinstance(p, lib.nn.Parameter)
    t, k = both(case)
    assert k == t


def test_modes_and_guards_are_per_thread():
    def case(lib):
        import threading
        log = []

        class Mode(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(fname(lib, func))
                return func(*args, **(kwargs or {}))

        class MyT(lib.Tensor):
            pass
        x = data(lib)
        seen_in_thread = []

        def other():
            seen_in_thread.append(type(lib.exp(data(lib).as_subclass(MyT))).__name__)
            lib.add(x, 1)
        with Mode():
            with _disable_subclass(lib)():
                t = threading.Thread(target=other)
                t.start()
                t.join()
            lib.mul(x, 2)
        return log, seen_in_thread
    t, k = both(case)
    assert k == t
