"""torch.autograd.detect_anomaly / set_detect_anomaly: the switches debugging scripts turn on. kiln
records the mode (is_anomaly_enabled answers it) but does not check backward for NaN or keep
forward tracebacks: training runs as without it."""
import warnings

_enabled = [False]


def is_anomaly_enabled():
    return _enabled[0]


class set_detect_anomaly:
    """Sets the mode on construction (so a plain call works), and back on leaving a with block."""

    def __init__(self, mode, check_nan=True):
        self.prev = _enabled[0]
        _enabled[0] = bool(mode)

    def __enter__(self):
        return None

    def __exit__(self, *args):
        _enabled[0] = self.prev
        return False


class detect_anomaly:
    """Context manager (and decorator) that turns the mode on, with torch's warning."""

    def __init__(self, check_nan=True):
        self.prev = _enabled[0]
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _enabled[0] = True

    def __exit__(self, *args):
        _enabled[0] = self.prev
        return False

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapped
