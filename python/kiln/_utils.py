"""torch._utils's helpers that programs import by that path: _accumulate (the running totals older copies of
random_split use), and _flatten_dense_tensors / _unflatten_dense_tensors (one contiguous buffer for a list of
tensors and its views back, as apex / fairseq-style gradient bucketing uses them)."""


def _accumulate(iterable, fn=lambda x, y: x + y):
    """Running totals: _accumulate([1, 2, 3]) yields 1, 3, 6 (fn combines the total and the next element)."""
    it = iter(iterable)
    try:
        total = next(it)
    except StopIteration:
        return
    yield total
    for element in it:
        total = fn(total, element)
        yield total


def _flatten_dense_tensors(tensors):
    """The tensors' elements, flattened and concatenated into one contiguous 1-D tensor."""
    from . import cat, empty
    tensors = list(tensors)
    if len(tensors) == 1:
        return tensors[0].contiguous().view(-1)
    if not tensors:
        return empty(0)
    return cat([t.contiguous().view(-1) for t in tensors])


def _unflatten_dense_tensors(flat, tensors):
    """Views of `flat` shaped as `tensors`, in order (the inverse of _flatten_dense_tensors)."""
    outputs = []
    offset = 0
    for t in tensors:
        n = t.numel()
        outputs.append(flat.narrow(0, offset, n).view_as(t))
        offset += n
    return tuple(outputs)
