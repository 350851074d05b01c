"""torch.broadcast_shapes and torch.broadcast_tensors: NumPy's broadcasting rule, once in Python
(the C++ ops broadcast their inputs themselves)."""
from ._size import Size


def broadcast_shapes(*shapes):
    """The shape all `shapes` broadcast to; RuntimeError naming the first mismatching dim."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for shape in shapes:
        for i, size in enumerate(shape):
            if size < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {list(shape)}")
            d = ndim - len(shape) + i
            if size == result[d] or size == 1:
                continue
            if result[d] != 1:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                                   f"between arg 0 and arg {shapes.index(shape)}: dims {result[d]} and {size}")
            result[d] = size
    return Size(result)


def broadcast_tensors(*tensors):
    """Views of `tensors` expanded to their common shape (as torch.broadcast_tensors)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)
