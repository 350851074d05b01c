"""A module whose attributes are checked bool flags (`kiln.backends.cudnn.benchmark = True`), the
way torch's backends modules are: assigning a non-bool raises RuntimeError, as in torch."""
import sys
import types


def check_bool(where, value):
    if not isinstance(value, bool):
        raise RuntimeError(f"{where} expects a bool, but got {type(value).__name__}")


def install_flags(module_name, flags):
    """Turns module_name's entries of flags (name -> default) into checked properties."""
    module = sys.modules[module_name]
    values = dict(flags)

    def prop(name):
        def get(self):
            return values[name]

        def set(self, value):
            check_bool(f"{module_name}.{name}", value)
            values[name] = value
        return property(get, set)

    cls = type(f"_{module_name.rsplit('.', 1)[-1]}_module", (types.ModuleType,), {n: prop(n) for n in values})
    module.__class__ = cls
    return values
