"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from collections import OrderedDict

from .module import Module


def _index(n, idx):
    """Normalises an int index into range(n), like a list."""
    idx = int(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class _ModuleSeq(Module):
    """Shared list-like behaviour: modules stored under the names '0', '1', ..."""

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(len(self), idx)]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(len(self), idx)]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(len(self), idx)]]):
            del self._modules[key]
        renumbered = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))
        self._modules.clear()
        self._modules.update(renumbered)

    def append(self, module):
        """Adds `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Inserts `module` before position `index` (a list's insert: clamped, negative from the end)."""
        if not isinstance(index, int):
            raise TypeError(f"list indices must be integers, not {type(index).__name__}")
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def pop(self, key):
        """Removes and returns the module at `key`."""
        module = self[key]
        del self[key]
        return module

    def __add__(self, other):
        """A new container of self's modules then other's (the modules themselves, not copies)."""
        if not isinstance(other, type(self)):
            raise ValueError(f"add operator supports only objects of {type(self).__name__} class, but "
                             f"{type(other)} is given.")
        combined = type(self)()
        for m in list(self) + list(other):
            combined.append(m)
        return combined

    def __iadd__(self, other):
        if isinstance(self, Sequential) and not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(list(other))


class Sequential(_ModuleSeq):
    """Sequential(m0, m1, ...) or Sequential(OrderedDict(name=module)): forward chains the modules."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self:
            input = m(input)
        return input

    def __mul__(self, other):
        """Sequential repeated `other` times (the same module objects), as torch's."""
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        for _ in range(other):
            for m in self:
                combined.append(m)
        return combined

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        modules = list(self)
        for _ in range(other - 1):
            for m in modules:
                self.append(m)
        return self


class ModuleList(_ModuleSeq):
    """A list of modules whose parameters are registered; it has no forward()."""

    def __init__(self, modules=None):
        super().__init__()
        if isinstance(modules, OrderedDict):  # from slicing
            modules = modules.values()
        if modules is not None:
            self.extend(modules)


class ModuleDict(Module):
    """A dict of modules whose parameters are registered under their keys (insertion order)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key):
        module = self._modules[key]
        del self._modules[key]
        return module

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, module in pairs:
            self[key] = module


class ParameterList(Module):
    """A list of Parameters registered under the names '0', '1', ... (tensors become Parameters)."""

    def __init__(self, values=None):
        super().__init__()
        for v in values or []:
            self.append(v)

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __getitem__(self, idx):
        return list(self._parameters.values())[_index(len(self), idx)]

    def __setitem__(self, idx, value):
        self.register_parameter(list(self._parameters)[_index(len(self), idx)], _as_parameter(value))

    def append(self, value):
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self


class ParameterDict(Module):
    """A dict of Parameters registered under their keys."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            pairs = parameters.items() if hasattr(parameters, "items") else parameters
            for key, value in pairs:
                self[key] = value

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        self.register_parameter(key, _as_parameter(value))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def __delitem__(self, key):
        del self._parameters[key]

    def get(self, key, default=None):
        return self._parameters[key] if key in self._parameters else default

    def pop(self, key):
        value = self._parameters[key]
        del self._parameters[key]
        return value

    def popitem(self):
        key = next(reversed(self._parameters))
        return key, self.pop(key)

    def setdefault(self, key, default=None):
        if key not in self._parameters:
            self[key] = default
        return self._parameters[key]

    def clear(self):
        self._parameters.clear()

    def update(self, parameters):
        pairs = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in pairs:
            self[key] = value

    def copy(self):
        return ParameterDict(OrderedDict(self._parameters))

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def __or__(self, other):
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        merged = ParameterDict(other)
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self

    def __reversed__(self):
        return reversed(list(self._parameters))


def _as_parameter(value):
    from ..parameter import Parameter
    return value if isinstance(value, Parameter) or value is None else Parameter(value)
