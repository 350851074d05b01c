"""Typed model of the schema: what native_functions.yaml and derivatives.yaml declare.

Everything the templates see is one of these objects; nothing downstream reads YAML.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

# Base types of the func: grammar (PyTorch's names).
BASE_TYPES = ("Tensor", "Scalar", "int", "float", "bool", "str", "ScalarType", "Device", "Generator")

DISPATCH_KEYS = ("CPU", "CUDA", "CompositeExplicit", "CompositeImplicit")
BACKEND_KEYS = ("CPU", "CUDA")


class CodegenError(Exception):
    """A problem in the YAML; `where` is "file:line: op" and is added by the loader."""

    def __init__(self, message: str, where: str = ""):
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


@dataclass(frozen=True)
class Type:
    base: str                    # one of BASE_TYPES
    is_list: bool = False        # int[], Tensor[]
    list_size: Optional[int] = None  # int[2]: a single int is broadcast to this many
    optional: bool = False       # trailing '?'
    elem_optional: bool = False  # Tensor?[]: elements may be None (an undefined Tensor in C++)

    def __str__(self) -> str:
        s = self.base + ("?" if self.elem_optional else "")
        if self.is_list:
            s += f"[{self.list_size}]" if self.list_size else "[]"
        return s + ("?" if self.optional else "")

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and not self.is_list

    @property
    def is_tensor_list(self) -> bool:
        return self.base == "Tensor" and self.is_list


@dataclass(frozen=True)
class Annotation:
    alias: str        # 'a'
    is_write: bool    # 'a!'


@dataclass
class Argument:
    name: str
    type: Type
    default: Optional[str] = None
    annotation: Optional[Annotation] = None
    kwarg_only: bool = False

    @property
    def is_mutable(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def signature(self) -> str:
        t = str(self.type)
        if self.annotation:
            t = t.replace("Tensor", f"Tensor({self.annotation.alias}{'!' if self.annotation.is_write else ''})", 1)
        s = f"{t} {self.name}"
        if self.default is not None:
            s += f"={self.default}"
        return s


@dataclass
class Return:
    name: Optional[str]
    type: Type
    annotation: Optional[Annotation] = None


@dataclass
class FunctionSchema:
    name: str            # 'add_' (with the trailing underscore of in-place forms)
    overload: str        # 'Tensor', '' when absent
    arguments: List[Argument]
    returns: List[Return]

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def base_name(self) -> str:
        """'add' for add, add_ and add.out: the op family's file name."""
        return self.name[:-1] if self.is_inplace else self.name

    @property
    def is_inplace(self) -> bool:
        return self.name.endswith("_") and not self.name.endswith("__")

    @property
    def out_argument(self) -> Optional[Argument]:
        outs = [a for a in self.arguments if a.kwarg_only and a.is_mutable]
        return outs[0] if outs else None

    @property
    def is_out(self) -> bool:
        return self.out_argument is not None

    @property
    def is_view(self) -> bool:
        return len(self.returns) == 1 and self.returns[0].annotation is not None and \
            not self.returns[0].annotation.is_write

    @property
    def positional(self) -> List[Argument]:
        return [a for a in self.arguments if not a.kwarg_only]

    @property
    def kwarg_only(self) -> List[Argument]:
        return [a for a in self.arguments if a.kwarg_only]

    def argument(self, name: str) -> Optional[Argument]:
        for a in self.arguments:
            if a.name == name:
                return a
        return None

    def signature(self) -> str:
        parts = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(a.signature())
        if len(self.returns) == 1 and self.returns[0].name is None:
            ret = str(self.returns[0].type)
            ann = self.returns[0].annotation
            if ann:
                ret = ret.replace("Tensor", f"Tensor({ann.alias}{'!' if ann.is_write else ''})", 1)
        else:
            ret = "(" + ", ".join(f"{r.type} {r.name}" if r.name else str(r.type) for r in self.returns) + ")"
        return f"{self.full_name}({', '.join(parts)}) -> {ret}"


@dataclass
class NativeFunction:
    schema: FunctionSchema
    variants: List[str]              # 'function', 'method'
    dispatch: Dict[str, str]         # dispatch key -> kernel name
    file: str
    line: int
    # Family expansion: the functional op an inplace/out member was declared with.
    family_role: str = "single"      # 'functional' | 'inplace' | 'out' | 'single'
    family_head: Optional["NativeFunction"] = None
    derivative: Optional["Derivative"] = None
    # `out_dtype: exact` on a CompositeImplicit op's family: its out= takes only the result's dtype
    # (torch's mm/addmm/dot/mv), not any dtype the result casts to safely.
    out_exact_dtype: bool = False
    # `out_dtype: as_dtype`: out's dtype is the op's dtype= when that is None, and a dtype= other
    # than out's is refused (torch's get_dtype_from_result: nansum(int, out=bool) sums into bool,
    # nansum(float, out=int64) has no kernel).
    out_as_dtype: bool = False
    # `autocast:` (lower_precision | fp32 | promote): torch's CPU autocast policy for this op.
    autocast: Optional[str] = None
    # `pointwise:`: the op's scalar formula (codegen/pointwise.py); its CPU kernel is generated.
    pointwise: Optional[object] = None
    # A fused backward op made from a pointwise derivative (loader._fused_backward): the forward
    # overload and the input whose gradient it computes. It is declared in no YAML file.
    fused_backward_of: Optional[Tuple[str, str]] = None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.schema.full_name}"

    @property
    def is_composite_implicit(self) -> bool:
        return "CompositeImplicit" in self.dispatch

    @property
    def is_composite_explicit(self) -> bool:
        return "CompositeExplicit" in self.dispatch

    @property
    def formula_source(self) -> Optional["Derivative"]:
        """The derivative entry this op uses (in-place forms reuse the functional one)."""
        if self.derivative is not None:
            return self.derivative
        if self.family_role == "inplace" and self.family_head is not None:
            return self.family_head.derivative
        return None


@dataclass
class Formula:
    inputs: List[str]    # the inputs it computes (one for now)
    expression: str      # C++ over kiln ops
    line: int
    # A formula op's derivative is written in the pointwise expression language: its tree (the
    # expression above is rendered from it) and the text as written.
    tree: Optional[object] = None
    source: str = ""
    # Its fused backward op (the tree as one pointwise kernel), called when no graph is built for
    # the backward pass, and that op's arguments as the Node names them.
    fused_op: Optional[str] = None
    fused_args: List[str] = field(default_factory=list)
    fused_tensors: List[str] = field(default_factory=list)  # the tensors among fused_args


@dataclass
class Derivative:
    name: str                        # 'add.Tensor'
    formulas: List[Formula]
    non_differentiable: List[str]
    output_differentiability: Optional[List[bool]]
    file: str
    line: int
    function: Optional[NativeFunction] = None
    # Filled by analysis: what the Node saves.
    saved_inputs: List[str] = field(default_factory=list)     # tensors/scalars saved by value
    saved_metadata: List[str] = field(default_factory=list)   # e.g. 'self.sizes()'
    saved_outputs: List[str] = field(default_factory=list)    # 'result', or named returns ('indices')
    node_name: str = ""
    # The Node's C++ class: node_name, unless another derivative shows the same name (torch's
    # NativeBatchNormBackward0 stands for two of kiln's ops): then it gets the op's name too.
    struct_name: str = ""
    # The library kernel its fused backward op offers the call to first (`library:`; see
    # runtime/kernels/cpu/library_kernels.h).
    library: Optional[str] = None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.name}"

    @property
    def uses_result(self) -> bool:
        return "result" in self.saved_outputs

    def output_index(self, name: str) -> int:
        """Position of a saved output among the op's returns."""
        if name == "result":
            return 0
        return [r.name for r in self.function.schema.returns].index(name)

    def output_is_differentiable(self, index: int) -> bool:
        return self.output_differentiability is None or self.output_differentiability[index]

    @property
    def differentiable(self) -> bool:
        return not (self.output_differentiability is not None and not any(self.output_differentiability))
