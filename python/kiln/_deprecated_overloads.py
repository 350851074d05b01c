"""torch's deprecated overloads with the scalar before the tensors (tools/autograd/deprecated.yaml in
torch), which old public code still calls: optimizers written for torch 0.4 (exp_avg.mul_(beta1).add_(1 - beta1,
grad), exp_avg_sq.addcmul_(1 - beta2, grad, grad), p.data.addcdiv_(-step_size, exp_avg, denom)) and center-loss
style distances (distmat.addmm_(1, -2, x, centers.t())). torch accepts them with a one-time UserWarning.

Each wrapper calls the current signature first; only when that raises TypeError are the positional arguments
matched against the deprecated forms ('S' a number, 'T' a tensor), and a call that matches none raises the
original TypeError."""
import numbers
import os
import sys
import warnings

from . import _C

_warned = set()


def _is_scalar(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, numbers.Number):
        return True
    return isinstance(v, _C.TensorBase) and v.dim() == 0  # torch takes a 0-dim tensor as a Scalar


def _is_tensor(v):
    return isinstance(v, _C.TensorBase)


# name -> [(pattern of the positional arguments, names the new call takes them under)];
# '' = the new call's first positional tensor (the function form's self).
_ALPHA = [("TST", ("", "alpha", "other"))]
_VALUE = [("TSTT", ("", "value", "tensor1", "tensor2"))]


def _beta_alpha(m1, m2):
    return [("STSTT", ("beta", "", "alpha", m1, m2)), ("STTT", ("beta", "", m1, m2))]


FUNCTION_FORMS = {
    "add": _ALPHA, "sub": _ALPHA, "addcmul": _VALUE, "addcdiv": _VALUE,
    "addmm": _beta_alpha("mat1", "mat2"), "addbmm": _beta_alpha("batch1", "batch2"),
    "baddbmm": _beta_alpha("batch1", "batch2"), "addmv": _beta_alpha("mat", "vec"),
    "addr": _beta_alpha("vec1", "vec2"),
}
# the method forms: the function forms without self
_SELF_FIRST = {"add", "sub", "addcmul", "addcdiv"}  # TST: self is the first T; STSTT: self is the second arg


def _method_pattern(name, pat):
    return pat[1:] if name in _SELF_FIRST else pat[0] + pat[2:]


METHOD_FORMS = {name: [(_method_pattern(name, pat), tuple(n for n in names if n)) for pat, names in forms]
                for name, forms in FUNCTION_FORMS.items()}


def _match(forms, args):
    for pat, names in forms:
        if len(pat) == len(args) and all(_is_scalar(a) if c == "S" else _is_tensor(a) for c, a in zip(pat, args)):
            return pat, names
    return None


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel():
    """The stacklevel of warnings.warn that names the first caller outside the kiln package (the
    program's line, as torch's warning names it), however many kiln wrappers are in between."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def _warn(label, pat, names):
    if label in _warned:
        return
    _warned.add(label)
    sig = ", ".join(("Number " if c == "S" else "Tensor ") + (n or "input") for c, n in zip(pat, names))
    warnings.warn(f"This overload of {label} is deprecated:\n\t{label}({sig})\nConsider using one of the "
                  f"following signatures instead:\n\t{label}(Tensor input, ..., *, Number "
                  f"{'/'.join(n for n in names if n in ('alpha', 'beta', 'value'))})", UserWarning,
                  stacklevel=user_stacklevel())


def _scalar(v):
    return v.item() if isinstance(v, _C.TensorBase) else v


def _call_new(fn, self_first, names, args, kwargs):
    positional, keywords = [], dict(kwargs)
    for n, a in zip(names, args):
        if n in ("alpha", "beta", "value"):
            keywords[n] = _scalar(a)
        else:
            positional.append(a)
    return fn(*(self_first + positional), **keywords)


def wrap_function(fn, name):
    forms = FUNCTION_FORMS[name]

    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            found = _match(forms, args) if set(kwargs) <= {"out"} else None
            if found is None:
                raise
        pat, names = found
        _warn(name, pat, names)
        return _call_new(fn, [], names, args, kwargs)

    wrapper.__name__ = getattr(fn, "__name__", name)
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    wrapper.__wrapped__ = fn
    return wrapper


def wrap_method(meth, name):
    forms = METHOD_FORMS[name.rstrip("_")]

    def wrapper(self, *args, **kwargs):
        try:
            return meth(self, *args, **kwargs)
        except TypeError:
            found = _match(forms, args) if not kwargs else None
            if found is None:
                raise
        pat, names = found
        _warn(name, pat, names)
        return _call_new(meth, [self], names, args, {})

    wrapper.__name__ = name
    wrapper.__doc__ = getattr(meth, "__doc__", None)
    wrapper.__wrapped__ = meth
    return wrapper


def install(namespace, tensor_cls):
    for name in FUNCTION_FORMS:
        if name in namespace:
            namespace[name] = wrap_function(namespace[name], name)
        for mname in (name, name + "_"):
            meth = getattr(tensor_cls, mname, None)
            if meth is not None:
                setattr(tensor_cls, mname, wrap_method(meth, mname))
