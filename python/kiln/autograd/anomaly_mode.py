"""torch.autograd.detect_anomaly / set_detect_anomaly: the switches debugging scripts turn on. With the mode
on (and check_nan, the default), every backward pass checks what each graph node returns and raises torch's
RuntimeError ("Function 'DivBackward0' returned nan values in its 1th output.") at the first NaN, through node
hooks installed on the graph before the pass (nan_check_roots). kiln keeps no forward tracebacks."""
import warnings

_enabled = [False]
_check_nan = [True]


def is_anomaly_enabled():
    return _enabled[0]


def is_anomaly_check_nan_enabled():
    return _check_nan[0]


def set_anomaly_enabled(enabled, check_nan=True):
    """torch.set_anomaly_enabled: the switch set_detect_anomaly sets."""
    _enabled[0] = bool(enabled)
    _check_nan[0] = bool(check_nan)


def _nan_hook(node):
    def check(grad_inputs, grad_outputs):
        if not (_enabled[0] and _check_nan[0]):
            return None
        for i, g in enumerate(grad_inputs):
            if g is not None and g.is_floating_point() and bool(g.isnan().any()):
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
        return None
    return check


def nan_check_roots(tensors):
    """With anomaly detection (check_nan) on: a NaN check on every node of the graph behind `tensors`."""
    if not (_enabled[0] and _check_nan[0]):
        return
    seen = set()
    stack = [t.grad_fn for t in tensors if getattr(t, "grad_fn", None) is not None]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "register_hook") and hasattr(node, "name"):
            node.register_hook(_nan_hook(node))
        stack.extend(n for n, _ in getattr(node, "next_functions", ()) if n is not None)


class set_detect_anomaly:
    """Sets the mode on construction (so a plain call works), and back on leaving a with block."""

    def __init__(self, mode, check_nan=True):
        self.prev = _enabled[0], _check_nan[0]
        _enabled[0] = bool(mode)
        _check_nan[0] = bool(check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *args):
        _enabled[0], _check_nan[0] = self.prev
        return False


class detect_anomaly:
    """Context manager (and decorator) that turns the mode on, with torch's warning."""

    def __init__(self, check_nan=True):
        self.prev = _enabled[0], _check_nan[0]
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _enabled[0] = True
        _check_nan[0] = bool(self.check_nan)

    def __exit__(self, *args):
        _enabled[0], _check_nan[0] = self.prev
        return False

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapped
