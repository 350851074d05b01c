"""Sparse gradients: the .grad of a leaf that embedding(sparse=True) / embedding_bag(sparse=True) feeds.

The C++ engine's AccumulateGrad only adds dense tensors, and a sparse COO tensor is a Python type
(docs/ARCHITECTURE.md, "Sparse gradients"). So the sparse part of a leaf's gradient is kept on the
Python side: `Tensor.grad` (python/kiln/_tensor.py) returns the tensor's `_sparse_grad` when it has
one, and assigning a SparseCooTensor to `.grad` stores it there. The embedding Functions' backward
returns no gradient for the weight to the engine; it hands the sparse gradient to `route` instead:

* inside `kiln.autograd.backward` (every `loss.backward()`), the pass's sparse gradients are collected
  and, once the engine is done, summed per leaf in the order their embedding calls were made (torch's
  InputBuffer) and accumulated into the leaf's .grad with torch's AccumulateGrad rules (`accumulate`);
* inside `kiln.autograd.grad`, which must not touch .grad, the sparse gradients of the weights among
  grad's inputs are collected and returned in their place (sparse, as torch's); for any other weight
  (one above an input) the Function returns the dense gradient to the engine.

Adding two sparse gradients follows torch's CPU add (add_out_sparse_cpu): when both values are
contiguous, a merge of the two index lists as they stand (equal indices summed into one row);
otherwise their concatenation. So `.grad` has torch's indices, in torch's order, after any number of
backward calls.
"""
import itertools

from .. import _C
from .._creation import tensor as _tensor
from ._coo import SparseCooTensor

# One entry per running kiln.autograd.backward / kiln.autograd.grad call: a list collecting
# (order, leaf, sparse gradient) for backward, a _GradPass for grad, None where the engine gets dense
# gradients (grad with is_grads_batched).
_passes = []
_order = itertools.count()


def next_order():
    return next(_order)


class _GradPass:
    """kiln.autograd.grad (and backward(inputs=)): the sparse gradients of the weights among `inputs` are
    collected here and returned by grad() in their place, as torch's (the engine gets None for them).
    A weight that is not a leaf is taken so only when it is the one input (else gradients for inputs
    above it would have to flow through it, and the engine carries dense tensors only)."""

    def __init__(self, inputs):
        self.ids = {id(t) for t in inputs if t.grad_fn is None or len(inputs) == 1}
        self.entries = []

    def takes(self, weight):
        return id(weight) in self.ids

    def merge(self, inputs, results, allow_unused):
        """The engine's results with the collected sparse gradients summed in (call order, torch's
        InputBuffer); a sparse gradient meeting a dense one gives their dense sum, as torch."""
        by_input = {}
        for order, leaf, g in sorted(self.entries, key=lambda e: e[0]):
            by_input[id(leaf)] = g if id(leaf) not in by_input else add_sparse(by_input[id(leaf)], g)
        out = []
        for t, g in zip(inputs, results):
            s = by_input.get(id(t))
            if s is not None:
                g = s if g is None else g + s.to_dense()
            if g is None and not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            out.append(g)
        return tuple(out)


def wants_dense(weight):
    """True where the weight's gradient goes to the engine, dense: inside kiln.autograd.grad for a weight
    that is not one of its inputs (or under is_grads_batched), and in backward() for a weight that is
    not a leaf (the engine carries dense gradients only)."""
    top = _passes[-1] if _passes else []
    if isinstance(top, _GradPass):
        return not top.takes(weight)
    return top is None or weight.grad_fn is not None


def route(leaf, grad, order):
    """Hands the sparse gradient of `leaf` to the running backward pass (or accumulates it at once when
    the engine was started some other way)."""
    if _passes and isinstance(_passes[-1], (list, _GradPass)):
        (_passes[-1] if isinstance(_passes[-1], list) else _passes[-1].entries).append((order, leaf, grad))
    else:
        accumulate(leaf, grad)


class backward_pass:
    """Around the engine in kiln.autograd.backward (collect=True), kiln.autograd.grad (collect=False and
    its inputs: a _GradPass, returned by __enter__) and is_grads_batched (no inputs: dense)."""

    def __init__(self, collect, inputs=None):
        self.collect = collect
        self.inputs = inputs

    def __enter__(self):
        entry = [] if self.collect else (_GradPass(self.inputs) if self.inputs is not None else None)
        _passes.append(entry)
        return entry

    def __exit__(self, exc_type, exc, tb):
        entries = _passes.pop()
        if exc_type is None and isinstance(entries, list) and entries:
            flush(entries)
        return False


def flush(entries):
    """Sums one pass's sparse gradients per leaf, in the order of the calls that made them, and
    accumulates each sum into its leaf's .grad."""
    by_leaf = {}
    for order, leaf, grad in entries:
        by_leaf.setdefault(id(leaf), (leaf, []))[1].append((order, grad))
    for leaf, grads in by_leaf.values():
        grads.sort(key=lambda item: item[0])
        total = grads[0][1]
        for _, g in grads[1:]:
            total = add_sparse(total, g)
        for hook in leaf.__dict__.get("_leaf_grad_hooks", ()):  # the leaf's register_hook hooks, as torch's
            result = hook(total)
            if result is not None:
                total = result
        accumulate(leaf, total)
        for hook in leaf.__dict__.get("_post_accumulate_hooks", ()):
            hook(leaf)


def accumulate(leaf, new):
    """torch's AccumulateGrad for a sparse incoming gradient: into a dense .grad in place (dense
    result); with a sparse .grad, torch's sparse add; with none, the gradient itself, its values made
    contiguous (torch clones what it cannot steal)."""
    from ..autograd.grad_mode import no_grad
    with no_grad():
        if not isinstance(new, SparseCooTensor):  # a hook returned a dense gradient
            old = leaf.grad
            leaf.grad = new.detach() if old is None else old + new
            return
        dense = _dense_grad(leaf)
        if dense is not None:
            dense_add_sparse_(dense, new, 1)
            return
        old = leaf.__dict__.get("_sparse_grad")
        if old is None:
            leaf.__dict__["_sparse_grad"] = _contiguous(new)
        else:
            old.add_(new)  # in place, as torch's variable_grad += new_grad (a held .grad sees it)


def _dense_grad(t):
    return _C.TensorBase.grad.__get__(t)


def _contiguous(s):
    i, v = s._indices_t, s._values_t
    if i.is_contiguous() and v.is_contiguous():
        return s
    return SparseCooTensor(i.contiguous(), v.contiguous(), s.shape, s.is_coalesced())


def add_sparse(t, s, alpha=1):
    """torch's sparse + alpha * sparse on the CPU (add_out_sparse_cpu): with one side empty the other
    (copied); with both values contiguous, the merge of the index lists as they stand (where the
    current entries are equal, one row holding their sum); else the two concatenated. The merge is
    coalesced when both are."""
    if tuple(t.shape) != tuple(s.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size {list(t.shape)} "
                           f"while other has size {list(s.shape)} (FYI: dense-sparse addition does not currently "
                           "support broadcasting)")
    if s._nnz() == 0:
        return SparseCooTensor(t._indices_t.clone(), t._values_t.clone(), t.shape, t.is_coalesced())
    if t._nnz() == 0:
        return SparseCooTensor(s._indices_t.clone(), s._values_t.mul(alpha), s.shape, s.is_coalesced())
    tv, sv = t._values_t, s._values_t.to(t.dtype)
    if not (tv.is_contiguous() and sv.is_contiguous()) or t.sparse_dim() != s.sparse_dim():
        values = sv if alpha == 1 else sv.mul(alpha)
        return SparseCooTensor(_C.cat([t._indices_t, s._indices_t], 1), _C.cat([tv, values], 0), t.shape, False)
    if t.sparse_dim() == 1:  # (embedding gradients) plain ints compare faster than 1-tuples
        ti, si = t._indices_t[0].tolist(), s._indices_t[0].tolist()
    else:
        ti, si = list(zip(*t._indices_t.tolist())), list(zip(*s._indices_t.tolist()))
    nt, ns = len(ti), len(si)
    i = j = 0
    pos_t, pos_s, out = [], [], []
    while i < nt or j < ns:
        if i >= nt:
            cmp = -1
        elif j >= ns:
            cmp = 1
        else:
            a, b = ti[i], si[j]
            cmp = 1 if a < b else (-1 if a > b else 0)
        if cmp >= 0:
            pos_t.append(len(out))
            out.append(ti[i])
            i += 1
        if cmp <= 0:
            pos_s.append(len(out) - 1 if cmp == 0 else len(out))
            if cmp < 0:
                out.append(si[j])
            j += 1
    indices = _tensor(out, dtype=_C.int64).reshape(len(out), -1).t().contiguous()
    values = _C.zeros([len(out)] + list(tv.shape[1:]), dtype=tv.dtype)
    values.index_copy_(0, _tensor(pos_t, dtype=_C.int64), tv)
    values.index_add_(0, _tensor(pos_s, dtype=_C.int64), sv, alpha=alpha)
    return SparseCooTensor(indices, values, t.shape, t.is_coalesced() and s.is_coalesced())


def dense_add_sparse_(dense, sparse, alpha):
    """torch's dense.add_(sparse, alpha=a) (add_out_dense_sparse_cpu): for each stored element in
    turn, its row of `dense` += a * value. Rows with several entries take them in order: one pass per
    occurrence rank, each a gather, an add_ with alpha (torch's rounding) and a scatter."""
    if tuple(dense.shape) != tuple(sparse.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(dense.shape)} while other has size {list(sparse.shape)} (FYI: dense-sparse "
                           "addition does not currently support broadcasting)")
    nnz = sparse._nnz()
    if nnz == 0:
        return dense
    from ._coo import _linear_index
    sizes = list(sparse.shape[:sparse.sparse_dim()])
    linear = _linear_index(sparse._indices_t, sizes)
    values = sparse._values_t.to(dense.dtype)
    flat = dense.view([-1] + list(dense.shape[sparse.sparse_dim():])) if sizes else dense.unsqueeze(0)
    if alpha == 1:  # one sum per element, in the entries' order: index_add_ is the same loop
        flat.index_add_(0, linear, values)
        return dense
    rank = _occurrence_rank(linear)
    passes = int(rank.max()) + 1
    for k in range(passes):
        if passes == 1:
            idx, vals = linear, values
        else:
            pick = (rank == k).nonzero().reshape(-1)
            idx, vals = linear.index_select(0, pick), values.index_select(0, pick)
        rows = flat.index_select(0, idx)
        rows.add_(vals, alpha=alpha)
        flat.index_copy_(0, idx, rows)
    return dense


def _occurrence_rank(linear):
    """For each entry, how many earlier entries have the same index (0 for the first)."""
    n = linear.shape[0]
    order = linear.sort(stable=True)[1]
    s = linear.index_select(0, order)
    pos = _C.arange(n, dtype=_C.int64)
    new_run = _C.ones([n], dtype=_C.bool)
    if n > 1:
        new_run[1:] = s[1:] != s[:-1]
    run_start = _C.where(new_run, pos, _C.zeros([n], dtype=_C.int64)).cummax(0)[0]
    rank = _C.zeros([n], dtype=_C.int64)
    rank.index_copy_(0, order, pos - run_start)
    return rank


def zero_sparse_(s):
    """torch's sparse zero_(): no stored elements, the size kept."""
    s._indices_t = _C.zeros([s.sparse_dim(), 0], dtype=_C.int64)
    s._values_t = _C.zeros([0] + list(s._values_t.shape[1:]), dtype=s.dtype)
    s._coalesced = True
    return s
