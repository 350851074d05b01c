"""Process-wide switches torch keeps in its global context: float32 matmul precision and
deterministic algorithms. Scripts set them on every machine, so they are settable and read back
as in torch; kiln's CPU kernels do not consult them (its matmuls are full float32, and its kernels
give the same result run to run)."""
import warnings

_PRECISIONS = ("highest", "high", "medium")
_state = {"float32_matmul_precision": "highest", "deterministic": False, "warn_only": False}


def set_float32_matmul_precision(precision):
    """'highest' (full float32), 'high' or 'medium' (let matmuls use TF32/bfloat16 where a GPU can);
    sets backends.cuda.matmul.allow_tf32 to match. Another string warns and changes nothing."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.")
        return
    _state["float32_matmul_precision"] = precision


def get_float32_matmul_precision():
    return _state["float32_matmul_precision"]


def _check_bool(fn, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Asks for deterministic algorithms (kiln's CPU kernels already are)."""
    _check_bool("use_deterministic_algorithms", "mode", mode)
    _check_bool("use_deterministic_algorithms", "warn_only", warn_only)
    _state["deterministic"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]


def get_deterministic_debug_mode():
    """0 (default), 1 (warn) or 2 (error), from use_deterministic_algorithms."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_deterministic_debug_mode(debug_mode):
    """'default'/0, 'warn'/1 or 'error'/2: use_deterministic_algorithms in one argument."""
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)
