"""torch._six (torch 1.x): the Python 2/3 shims old code still imports (`from torch._six import inf`,
string_classes in collate functions, container_abcs in older releases)."""
import collections.abc as container_abcs  # noqa: F401
import math

inf = math.inf
nan = math.nan
string_classes = (str, bytes)
int_classes = int
PY37 = True


def with_metaclass(meta, *bases):
    """A base class made with metaclass meta (six.with_metaclass)."""
    class metaclass(meta):
        def __new__(cls, name, this_bases, d):
            return meta(name, bases, d)
    return type.__new__(metaclass, "temporary_class", (), {})
