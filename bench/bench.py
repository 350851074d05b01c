"""kiln vs NumPy (and vs PyTorch when python3-torch is installed), one run, as ratios.

    bazel build //:python_package && PYTHONPATH=bazel-bin /usr/bin/python3 bench/bench.py

Each case reports the best of several repeats (time per call). Ratios > 1 mean kiln
is slower than the reference. Not a test: numbers depend on the machine.
"""
import time

import numpy as np

import kiln

try:
    import torch
except ImportError:  # PyTorch is optional
    torch = None


def best(fn, repeat=5, number=None):
    fn()  # warm up (allocator caches, lazy init)
    if number is None:
        t0 = time.perf_counter()
        fn()
        once = time.perf_counter() - t0
        number = max(1, min(100000, int(0.05 / max(once, 1e-9))))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def fmt(seconds):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:8.2f} {unit}"
    return f"{seconds * 1e9:8.2f} ns"


def report(name, k, n=None, t=None):
    cols = [f"{name:38s}", f"kiln {fmt(k)}"]
    if n is not None:
        cols.append(f"numpy {fmt(n)}  kiln/numpy {k / n:6.2f}")
    if t is not None:
        cols.append(f"torch {fmt(t)}  kiln/torch {k / t:6.2f}")
    print("  ".join(cols))


def reductions(rng):
    """Reductions on one thread (issue 15's goals: 16M float32, 1M float16/bfloat16), the full
    reduction and the two kinds of single-dim reduction (the last, contiguous dim; an outer dim)."""
    threads = kiln.get_num_threads(), torch.get_num_threads() if torch else None
    kiln.set_num_threads(1)
    if torch:
        torch.set_num_threads(1)
    x32 = rng.standard_normal(16 * 1024 * 1024).astype(np.float32)
    kx, tx = kiln.from_numpy(x32), torch.from_numpy(x32.copy()) if torch else None
    for op in ("sum", "mean", "amax", "amin", "argmax", "argmin"):
        report(f"{op} 16M float32, 1 thread", best(lambda: getattr(kiln, op)(kx), number=5), None,
               best(lambda: getattr(torch, op)(tx), number=5) if torch else None)
    # 256K floats (1 MB) stay in cache: the loops' own speed, where 16M measures memory (and whatever
    # else shares it).
    ks, ts = kx[: 1 << 18].clone(), tx[: 1 << 18].clone() if torch else None
    for op in ("sum", "amax", "argmax"):
        report(f"{op} 256K float32 (in cache), 1 thread", best(lambda: getattr(kiln, op)(ks)), None,
               best(lambda: getattr(torch, op)(ts)) if torch else None)
    k2, t2 = kx.reshape(4096, 4096), tx.reshape(4096, 4096) if torch else None
    for op, dim in (("sum", 1), ("sum", 0), ("amax", 1), ("amax", 0), ("argmax", 1), ("argmax", 0), ("prod", 1),
                    ("prod", 0), ("all", 1)):
        report(f"{op} 4096x4096 float32 dim={dim}, 1 thread", best(lambda: getattr(kiln, op)(k2, dim), number=5), None,
               best(lambda: getattr(torch, op)(t2, dim), number=5) if torch else None)
    x1 = x32[: 1 << 20]
    for name in ("float16", "bfloat16"):
        kh = kiln.from_numpy(x1).to(getattr(kiln, name))
        th = torch.from_numpy(x1.copy()).to(getattr(torch, name)) if torch else None
        report(f"sum 1M {name}, 1 thread", best(lambda: kh.sum()), None, best(lambda: th.sum()) if torch else None)
    kiln.set_num_threads(threads[0])
    if torch:
        torch.set_num_threads(threads[1])


def main():
    kiln.manual_seed(0)
    rng = np.random.default_rng(0)
    print(f"threads: kiln {kiln.get_num_threads()}" + (f", torch {torch.get_num_threads()}" if torch else ""))

    # Per-op Python overhead on 1-element tensors.
    a, b = kiln.ones(1), kiln.ones(1)
    na, nb = np.ones(1, np.float32), np.ones(1, np.float32)
    ta, tb = (torch.ones(1), torch.ones(1)) if torch else (None, None)
    report("add, 1 element (per-op overhead)", best(lambda: a + b), best(lambda: na + nb),
           best(lambda: ta + tb) if torch else None)

    # A tiny forward + backward.
    w = kiln.randn(4, 4, requires_grad=True)
    x = kiln.randn(2, 4)

    def tiny():
        w.grad = None
        (x @ w).tanh().sum().backward()
    tw = torch.randn(4, 4, requires_grad=True) if torch else None
    tx = torch.randn(2, 4) if torch else None

    def tiny_torch():
        tw.grad = None
        (tx @ tw).tanh().sum().backward()
    report("tiny forward+backward (4x4)", best(tiny), None, best(tiny_torch) if torch else None)

    # Memory-bound pointwise ops and reductions on 16M floats.
    n = 16 * 1024 * 1024
    big_a, big_b = kiln.rand(n), kiln.rand(n)
    nba, nbb = big_a.numpy(), big_b.numpy()
    out, nout = kiln.empty(n), np.empty(n, np.float32)
    tba, tbb = (torch.from_numpy(nba.copy()), torch.from_numpy(nbb.copy())) if torch else (None, None)
    tout = torch.empty(n) if torch else None
    report("add 16M floats, fresh result", best(lambda: big_a + big_b, number=5),
           best(lambda: nba + nbb, number=5), best(lambda: tba + tbb, number=5) if torch else None)
    report("add 16M floats, out=", best(lambda: kiln.add(big_a, big_b, out=out), number=5),
           best(lambda: np.add(nba, nbb, out=nout), number=5),
           best(lambda: torch.add(tba, tbb, out=tout), number=5) if torch else None)
    report("sum 16M floats", best(lambda: big_a.sum(), number=5), best(lambda: nba.sum(), number=5),
           best(lambda: tba.sum(), number=5) if torch else None)

    # Transcendental pointwise formulas into an existing float32 buffer and into a fresh one, on one
    # thread: compute-bound, so this is the vector math (kiln: Sleef or Highway per intrinsic, torch:
    # Sleef), not memory. log takes |x|. gelu is a composite of pointwise ops in kiln (no out=).
    # kiln._C._simd_target() names the instruction set kiln's dispatch picked on this machine.
    print(f"kiln's vector kernels run: {getattr(kiln._C, '_simd_target', lambda: 'scalar code only')()}")
    threads = kiln.get_num_threads(), torch.get_num_threads() if torch else None
    kiln.set_num_threads(1)
    if torch:
        torch.set_num_threads(1)
    for size, label in ((n, "16M"), (1 << 20, "1M")):
        x = kiln.from_numpy(rng.standard_normal(size).astype(np.float32))
        nx, kout, nout2 = x.numpy(), kiln.empty(size), np.empty(size, np.float32)
        tx, tout2 = (torch.from_numpy(nx.copy()), torch.empty(size)) if torch else (None, None)
        xs = {"log": (x.abs(), np.abs(nx), tx.abs() if torch else None)}
        number = 3 if size == n else None
        for op, np_fn in (("exp", np.exp), ("log", np.log), ("tanh", np.tanh), ("sigmoid", None), ("erf", None)):
            kx, npx, ttx = xs.get(op, (x, nx, tx))
            report(f"{op} {label} floats, out=, 1 thread",
                   best(lambda: getattr(kiln, op)(kx, out=kout), number=number),
                   best(lambda: np_fn(npx, out=nout2), number=number) if np_fn else None,
                   best(lambda: getattr(torch, op)(ttx, out=tout2), number=number) if torch else None)
            if size == n:
                report(f"{op} {label} floats, fresh result, 1 thread",
                       best(lambda: getattr(kiln, op)(kx), number=number), None,
                       best(lambda: getattr(torch, op)(ttx), number=number) if torch else None)
        report(f"gelu {label} floats, fresh result, 1 thread",
               best(lambda: kiln.nn.functional.gelu(x), number=number), None,
               best(lambda: torch.nn.functional.gelu(tx), number=number) if torch else None)
        if size == n:
            report(f"add {label} floats, out=, 1 thread", best(lambda: kiln.add(x, x, out=kout), number=number),
                   None, best(lambda: torch.add(tx, tx, out=tout2), number=number) if torch else None)
    kiln.set_num_threads(threads[0])
    if torch:
        torch.set_num_threads(threads[1])

    reductions(rng)

    # GEMM.
    m1, m2 = kiln.rand(1024, 1024), kiln.rand(1024, 1024)
    n1, n2 = m1.numpy(), m2.numpy()
    t1, t2 = (torch.from_numpy(n1.copy()), torch.from_numpy(n2.copy())) if torch else (None, None)
    report("mm 1024x1024 float32", best(lambda: kiln.mm(m1, m2), number=3), best(lambda: n1 @ n2, number=3),
           best(lambda: t1 @ t2, number=3) if torch else None)

    # One MLP training step (batch 64, 64-128-64-10), as in examples/train_mlp_digits.py.
    model = kiln.nn.Sequential(kiln.nn.Linear(64, 128), kiln.nn.ReLU(), kiln.nn.Linear(128, 64), kiln.nn.ReLU(),
                               kiln.nn.Linear(64, 10))
    opt = kiln.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xb = kiln.rand(64, 64)
    yb = kiln.randint(0, 10, (64,))

    def step():
        loss = kiln.nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch_step = None
    if torch:
        tm = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64),
                                 torch.nn.ReLU(), torch.nn.Linear(64, 10))
        topt = torch.optim.SGD(tm.parameters(), lr=0.01, momentum=0.9)
        txb, tyb = torch.rand(64, 64), torch.randint(0, 10, (64,))

        def torch_step():
            loss = torch.nn.functional.cross_entropy(tm(txb), tyb)
            topt.zero_grad()
            loss.backward()
            topt.step()
    report("MLP training step (batch 64)", best(step), None, best(torch_step) if torch else None)

    # float16 / bfloat16 on 1M elements: float32 compute with a conversion on the way in and out
    # (NumPy has float16 only; torch 1.13 has no float16 exp on the CPU).
    x32 = rng.standard_normal(1 << 20).astype(np.float32)
    y32 = rng.standard_normal(1 << 20).astype(np.float32)
    for name, np_dtype in (("float16", np.float16), ("bfloat16", None)):
        kx, ky = kiln.from_numpy(x32).to(getattr(kiln, name)), kiln.from_numpy(y32).to(getattr(kiln, name))
        nx, ny = (x32.astype(np_dtype), y32.astype(np_dtype)) if np_dtype else (None, None)
        tx, ty = (torch.from_numpy(x32).to(getattr(torch, name)), torch.from_numpy(y32).to(getattr(torch, name))) \
            if torch else (None, None)
        report(f"add 1M {name}", best(lambda: kx + ky), best(lambda: nx + ny) if np_dtype else None,
               best(lambda: tx + ty) if torch else None)
        report(f"sum 1M {name}", best(lambda: kx.sum()), best(lambda: nx.sum()) if np_dtype else None,
               best(lambda: tx.sum()) if torch else None)
        report(f"exp 1M {name}", best(lambda: kx.exp()), best(lambda: np.exp(nx)) if np_dtype else None,
               best(lambda: tx.exp()) if torch and name == "bfloat16" else None)
        report(f"{name} -> float32, 1M", best(lambda: kx.float()), best(lambda: nx.astype(np.float32)) if np_dtype
               else None, best(lambda: tx.float()) if torch else None)


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["reductions"]:  # only the reductions (bench.py reductions)
        print(f"kiln's vector kernels run: {kiln._C._simd_target()}")
        reductions(np.random.default_rng(0))
    else:
        main()
