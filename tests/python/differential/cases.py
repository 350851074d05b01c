"""Op specs (how to call an op, in which forms, with which argument generator) and cases (one
seeded random call of one spec), with their kiln-syntax repro."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from .core import DTYPES, D, Out, T, render
from .gen import G, case_rng

VARIANTS = ("func", "method", "inplace", "out", "template")


@dataclass
class Spec:
    key: str                                   # unique; the case id prefix
    gen: Callable[[G], Tuple[tuple, dict]]
    func: Optional[str] = None                 # "abs", "nn.functional.relu" (under kiln./torch.)
    method: Optional[str] = None
    inplace: Optional[str] = None
    out: bool = False
    template: Optional[str] = None             # e.g. "{0} + {1}": the only form when given
    dtypes: Tuple[str, ...] = DTYPES
    grad: bool = True                          # differentiable in float64
    values: bool = True                        # compare values (False: random / uninitialized)
    n: int = 12                                # cases
    tol: float = 1.0                           # tolerance scale
    extremes: bool = True                      # edge values include ±max (not where sums overflow in an order-dependent way)
    covers: Tuple[str, ...] = ()               # API names a template calls (for the coverage test)
    signed_zeros: bool = False                 # also compare the sign of zero results (-0.0 vs 0.0)
    variants: List[str] = field(default_factory=list)


@dataclass
class Case:
    spec: Spec
    index: int
    seed: int
    variant: str
    dtype: str
    grad: bool
    args: tuple
    kwargs: dict

    @property
    def id(self) -> str:
        return f"{self.spec.key}#{self.index}"

    @property
    def op(self) -> str:
        return self.spec.key

    def expr(self, args: List[str], kwargs: Dict[str, str], lib: str = "LIB") -> str:
        s, v = self.spec, self.variant
        kw = [f"{k}={val}" for k, val in kwargs.items()]
        if v == "template":
            t = s.template[5:] if s.template.startswith("exec:") else s.template
            return t.replace("LIB", lib).format(*args, kw=", ".join(kw))
        if v == "func":
            return f"{lib}.{s.func}({', '.join(list(args) + kw)})"
        if v == "out":
            return f"{lib}.{s.func}({', '.join(list(args) + kw)})"
        name = s.method if v == "method" else s.inplace
        # an in-place op with gradients works on a non-leaf copy (a leaf that requires grad refuses)
        self_ = f"({args[0]} * 1)" if v == "inplace" and self.grad else args[0]
        return f"{self_}.{name}({', '.join(list(args[1:]) + kw)})"

    def repro(self) -> str:
        if self.spec.template and self.spec.template.startswith("exec:"):
            names = [f"a{i}" for i in range(len(self.args))]
            src = "; ".join(f"{n} = {render(a)}" for n, a in zip(names, self.args)) + "; " + \
                self.expr(names, {}, "kiln") + "; print(_r)"
        else:
            src = self.expr([render(a) for a in self.args], {k: render(v) for k, v in self.kwargs.items()}, "kiln")
        tags = f"{self.variant}, {self.dtype}" + (", grad of sum(out*w)" if self.grad else "")
        return f"from math import inf, nan; import kiln; {src}    # [{self.id} seed={self.seed} {tags}]"

    def arg_dtypes(self) -> List[str]:
        found = []

        def walk(x):
            if isinstance(x, T):
                found.append(x.dtype)
            elif isinstance(x, (list, tuple)):
                for v in x:
                    walk(v)
            elif isinstance(x, dict):
                for v in x.values():
                    walk(v)
        walk(self.args)
        walk(self.kwargs)
        return found


def has(lib, path: str) -> bool:
    obj = lib
    for part in path.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def resolve_variants(spec: Spec, kiln, torch) -> List[str]:
    """The forms both libraries have (a form kiln lacks is reported by the API coverage test)."""
    if spec.template:
        return ["template"]
    v = []
    if spec.func and has(torch, spec.func) and has(kiln, spec.func):
        v.append("func")
        if spec.out:
            v.append("out")
    if spec.method and hasattr(torch.Tensor, spec.method) and hasattr(kiln.Tensor, spec.method):
        v.append("method")
    if spec.inplace and hasattr(torch.Tensor, spec.inplace) and hasattr(kiln.Tensor, spec.inplace):
        v.append("inplace")
    return v


def make_case(spec: Spec, seed: int, index: int) -> Case:
    rng = case_rng(seed, spec.key, index)
    variant = spec.variants[int(rng.integers(len(spec.variants)))]
    dts = list(spec.dtypes)
    # float64 twice as likely: it carries the gradient checks
    if "float64" in dts:
        dts.append("float64")
    dtype = dts[int(rng.integers(len(dts)))]
    grad = spec.grad and dtype == "float64" and variant in ("func", "method", "template", "inplace") and rng.random() < 0.6
    g = G(rng, dtype, grad)
    g.extremes = spec.extremes
    args, kwargs = spec.gen(g)
    if variant == "out":
        kwargs = dict(kwargs)
        kwargs["out"] = Out(None if g.p(0.7) else g.pick(list(DTYPES)), g.pick(["right", "right", "strided", "empty", "empty"]))
    return Case(spec, index, seed, variant, dtype, grad, tuple(args), dict(kwargs))
