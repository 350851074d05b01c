"""kiln.version: torch.version's fields. kiln follows torch 1.13's Python API, so __version__ is
'1.13.1+kiln' and compares as a version (>= '1.13', >= (1, 13)) like torch.__version__; cuda and hip
are None (no GPU backend)."""
import re


class TorchVersion(str):
    """A str whose ordering compares release numbers: '1.13.1+kiln' >= '1.9' and >= (1, 13)."""

    @staticmethod
    def _release(v):
        """(1, 13, 1) from '1.13.1+kiln', '1.13.1rc1' or (1, 13, 1)."""
        if isinstance(v, (tuple, list)):
            return tuple(int(x) for x in v)
        m = re.match(r"\d+(\.\d+)*", str(v))
        return tuple(int(x) for x in m.group(0).split(".")) if m else ()

    def _cmp(self, other):
        a, b = self._release(self), self._release(other)
        n = max(len(a), len(b))
        a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
        return (a > b) - (a < b)

    def __lt__(self, other):
        return self._cmp(other) < 0

    def __le__(self, other):
        return self._cmp(other) <= 0

    def __gt__(self, other):
        return self._cmp(other) > 0

    def __ge__(self, other):
        return self._cmp(other) >= 0


__version__ = TorchVersion("1.13.1+kiln")
git_version = "Unknown"
debug = False
cuda = None
hip = None
