"""What the program tests share: run a program under torch and under kiln (programs/swap.py) with
the same arguments, and compare the two runs' starting weights and step losses."""
import warnings

import numpy as np

from programs.swap import load_program


def run_both(name, argv):
    """(torch result, kiln result) of program `name`'s main(argv + ["--quiet"])."""
    results = []
    for lib in ("torch", "kiln"):
        mod = load_program(name, lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results.append(mod.main(list(argv) + ["--quiet"]))
    return results


def to_np(t):
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "numpy") else t)


def check_same_start(rt, rk, skip=()):
    """The initial state_dicts bit for bit; `skip`: suffixes of entries only one of them has."""
    names = [n for n in rt["initial_state"] if not n.endswith(skip)]
    assert names == [n for n in rk["initial_state"] if not n.endswith(skip)]
    for name in names:
        np.testing.assert_array_equal(to_np(rk["initial_state"][name]), to_np(rt["initial_state"][name]),
                                      err_msg=name)


def check_steps(rt, rk, n_min, rtol, learns=True):
    """At least n_min steps, each loss within rtol of torch's; with learns, the last steps below the first."""
    lt, lk = np.array(rt["step_losses"]), np.array(rk["step_losses"])
    assert len(lk) == len(lt) and len(lt) >= n_min
    np.testing.assert_allclose(lk, lt, rtol=rtol)
    if learns:
        assert lk[-3:].mean() < lk[:3].mean()
