"""kiln.einsum: Einstein summation written with permute, reshape, sum and bmm, so autograd
(and double backward) come from those ops.

Operands are contracted left to right. For each pair, every index is one of: batch (in both
and needed later), contracted (in both, not needed later), or kept by one side; summing
indices used nowhere else first, the pair becomes one bmm of shape
(batch, left-kept, contracted) @ (batch, contracted, right-kept).
"""
import builtins
import string

from . import _C

_LETTERS = set(string.ascii_letters)


def _parse(equation, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): {len(terms)} operands in the equation '{equation}', but {len(operands)} given")
    ell_letters = [c for c in string.ascii_letters if c not in eq][::-1]  # stand-ins for '...' dims
    max_ell = 0
    parsed = []
    for term, op in zip(terms, operands):
        if term.count("...") > 1 or term.replace("...", "").count(".") or not set(term.replace("...", "")) <= _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript '{term}' in '{equation}'")
        named = len(term.replace("...", ""))
        if "..." in term:
            n_ell = op.dim() - named
            if n_ell < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in '{term}' is more than the number of "
                                   f"dimensions ({op.dim()}) of its operand")
            max_ell = builtins.max(max_ell, n_ell)
        elif named != op.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match the "
                               f"number of dimensions ({op.dim()}) for operand {len(parsed)}")
        parsed.append(term)
    ell = "".join(ell_letters[:max_ell][::-1])
    expanded = []
    for term, op in zip(parsed, operands):
        if "..." in term:
            n_ell = op.dim() - len(term.replace("...", ""))
            term = term.replace("...", ell[len(ell) - n_ell:])
        expanded.append(term)
    if arrow:
        if rhs.count("...") > 1 or not set(rhs.replace("...", "")) <= _LETTERS:
            raise RuntimeError(f"einsum(): invalid output subscript '{rhs}'")
        out = rhs.replace("...", ell)
        for c in out:
            if out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if not any(c in t for t in expanded):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")
    else:  # implicit: '...' first, then the letters used exactly once, in alphabetical order
        counts = {}
        for t in expanded:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return expanded, out


def _diagonal_first(op, term):
    """Takes the diagonal over repeated letters in one term ('ii' -> 'i')."""
    while True:
        repeated = next((c for c in term if term.count(c) > 1), None)
        if repeated is None:
            return op, term
        i = term.index(repeated)
        j = term.index(repeated, i + 1)
        if op.shape[i] != op.shape[j]:
            raise RuntimeError(f"einsum(): subscript {repeated} is repeated for operand but the sizes don't match, "
                               f"{op.shape[i]} != {op.shape[j]}")
        # A view, as torch's: diagonal() drops dims i and j and appends the diagonal last.
        rest = [k for k in range(op.dim()) if k not in (i, j)]
        op, term = op.diagonal(0, i, j), "".join(term[k] for k in rest) + repeated


def _sum_unused(op, term, keep):
    dims = [k for k, c in enumerate(term) if c not in keep]
    if dims:
        op = op.sum(dims)
        term = "".join(c for c in term if c in keep)
    return op, term


def _contract(a, ta, b, tb, needed):
    sizes = {}
    for t, op in ((ta, a), (tb, b)):
        for c, n in zip(t, op.shape):
            if c in sizes and sizes[c] != n and 1 not in (sizes[c], n):
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes: subscript {c} has "
                                   f"sizes {sizes[c]} and {n}")
            sizes[c] = builtins.max(sizes.get(c, 1), n) if c in sizes else n
    batch = [c for c in ta if c in tb and c in needed]
    contracted = [c for c in ta if c in tb and c not in needed]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]

    def arrange(op, t, groups):
        order = [t.index(c) for g in groups for c in g]
        op = op.permute(order)
        return op.expand([sizes[c] for g in groups for c in g])

    def prod(cs):
        p = 1
        for c in cs:
            p *= sizes[c]
        return p

    a3 = arrange(a, ta, (batch, left, contracted)).reshape(prod(batch), prod(left), prod(contracted))
    b3 = arrange(b, tb, (batch, contracted, right)).reshape(prod(batch), prod(contracted), prod(right))
    out = _C.bmm(a3, b3).reshape([sizes[c] for c in batch + left + right])
    return out, "".join(batch + left + right)


def _from_sublists(args):
    """The equation and operands of torch's sublist form: operand, sublist, operand, sublist, ...,
    then an optional output sublist."""
    def letters(sub):
        out = ""
        for n in sub:
            if n is Ellipsis:
                out += "..."
            elif isinstance(n, int) and 0 <= n < 26:
                out += chr(ord("A") + n)
            elif isinstance(n, int) and 26 <= n < 52:
                out += chr(ord("a") + n - 26)
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        return out

    operands = args[0::2][:len(args) // 2]
    subs = [letters(s) for s in args[1::2][:len(args) // 2]]
    equation = ",".join(subs)
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return equation, tuple(operands)


def einsum(equation, *operands):
    """torch.einsum: einsum('ij,jk->ik', a, b), implicit output, '...' broadcasting, repeated
    indices (diagonals); operands may also be given as one list, or in the sublist format
    einsum(op1, [0, 1], op2, [1, 2], [0, 2]) (ints in [0, 52) and Ellipsis)."""
    if not isinstance(equation, str):
        equation, operands = _from_sublists((equation,) + tuple(operands))
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    terms, out = _parse(equation, operands)
    ops = []
    for op, term in zip(operands, terms):
        op, term = _diagonal_first(op, term)
        ops.append((op, term))
    # Indices used by no other operand and not in the output are summed away first.
    for k, (op, term) in enumerate(ops):
        elsewhere = set(out).union(*(set(t) for j, (_, t) in enumerate(ops) if j != k))
        ops[k] = _sum_unused(op, term, elsewhere)
    result, term = ops[0]
    for k in range(1, len(ops)):
        op, t = ops[k]
        needed = set(out).union(*(set(tt) for _, tt in ops[k + 1:]))
        result, term = _contract(result, term, op, t, needed)
        result, term = _sum_unused(result, term, needed)
    result, term = _sum_unused(result, term, set(out))
    if term != out:
        result = result.permute([term.index(c) for c in out])
    return result
