"""kiln.Size: the type of tensor.shape, a tuple of ints."""


class Size(tuple):
    def __new__(cls, sizes=()):
        """torch.Size(iterable): every item an int or something with __index__ (a NumPy int, a 0-dim
        integer tensor), stored as int; anything else is a TypeError, as torch's."""
        if type(sizes) is tuple:
            for v in sizes:
                if type(v) is not int:
                    break
            else:
                return tuple.__new__(cls, sizes)
        items = []
        for i, v in enumerate(sizes):
            if isinstance(v, int):
                items.append(int(v))
                continue
            index = getattr(type(v), "__index__", None)
            if index is None or (hasattr(v, "is_floating_point") and v.is_floating_point()):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(v).__name__}')")
            items.append(index(v))
        return tuple.__new__(cls, items)

    def __repr__(self):
        return f"kiln.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __add__(self, other):
        # torch's Size + tuple is a Size; + a list is tuple's TypeError; tuple + Size stays a tuple
        # (no __radd__, so Python's tuple.__add__ makes it)
        r = tuple.__add__(self, other)
        return r if r is NotImplemented else Size(r)

    def __mul__(self, n):
        r = tuple.__mul__(self, n)
        return r if r is NotImplemented else Size(r)

    __rmul__ = __mul__

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r
