"""kiln.layout: how a tensor's elements are stored. kiln.strided (every dense tensor) and
kiln.sparse_coo (kiln.sparse: indices and values, python/kiln/sparse/_coo.py), as torch.layout."""


class layout:
    __module__ = "kiln"

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "kiln." + self._name

    def __reduce__(self):  # pickled by name, so a copy is the same object (compared with `is` in scripts)
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
