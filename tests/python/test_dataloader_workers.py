"""DataLoader with worker processes (num_workers > 0), IterableDataset, samplers and the
loader's option rules, as torch 1.13's torch.utils.data. Random orders and worker seeds are
compared with torch's own (kiln's generator gives torch's stream)."""
import collections
import copy
import gc
import multiprocessing
import os
import pickle
import random
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import kiln
from kiln.utils.data import (BatchSampler, ChainDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                             Sampler, SequentialSampler, SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                             get_worker_info)
from kiln.utils.data._worker import _generate_state
from kiln.utils.data.sampler import _int64_seed

@pytest.fixture(autouse=True)
def no_workers_left_behind():
    yield
    gc.collect()
    deadline = time.time() + 10
    while multiprocessing.active_children() and time.time() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []


def tensor_dataset(n=23):
    return TensorDataset(kiln.arange(2.0 * n).reshape(n, 2), kiln.arange(n))


def labels(dl):
    return [y.tolist() for _, y in dl]


class SlowFirstBatch(Dataset):
    """Indices 0..3 (the first batch of 4, worker 0's) are slow, so later batches arrive first."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i < 4:
            time.sleep(0.05)
        return kiln.tensor([float(i)]), i


class WorkerState(Dataset):
    """Reports, per sample, the state of the worker process that loaded it."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return {"index": i, "id": info.id, "num_workers": info.num_workers, "seed": info.seed,
                "dataset_is_a_copy": info.dataset is not None, "pid": os.getpid(), "threads": kiln.get_num_threads(),
                "random": random.random(), "numpy": int(np.random.randint(1 << 30)), "kiln": kiln.rand(1).item(),
                "init": getattr(info.dataset, "init_by", None)}


def mark_init(worker_id):
    get_worker_info().dataset.init_by = worker_id


class Faulty(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"sample {i} is broken")
        if i == 6:
            raise KeyError("missing")
        return i


class Sleepy(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(1.0)
        return i


class Pid(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return os.getpid(), i


class Sharded(IterableDataset):
    """range(start, end), each worker taking a contiguous share (torch's documented example)."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per_worker = int(np.ceil((self.end - self.start) / info.num_workers))
        lo = self.start + info.id * per_worker
        return iter(range(lo, min(lo + per_worker, self.end)))

    def __len__(self):
        return self.end - self.start


class Unsharded(IterableDataset):
    def __iter__(self):
        return iter(range(5))


# ---- batches come back in the sampler's order ----

def test_batch_order_equals_single_process_order():
    ds = tensor_dataset()
    for options in [dict(batch_size=4), dict(batch_size=5, drop_last=True), dict(batch_size=None),
                    dict(batch_size=3, num_workers=2, prefetch_factor=1)]:
        single = labels(DataLoader(ds, **{k: v for k, v in options.items() if k not in ("num_workers", "prefetch_factor")}))
        options.setdefault("num_workers", 2)
        assert labels(DataLoader(ds, **options)) == single


def test_out_of_order_arrivals_are_delivered_in_order():
    batches = list(DataLoader(SlowFirstBatch(), batch_size=4, num_workers=2))
    assert [b[1].tolist() for b in batches] == [list(range(i, i + 4)) for i in range(0, 16, 4)]
    assert batches[0][0].shape == (4, 1) and batches[0][0].dtype == kiln.float32


def test_shuffled_order_with_workers_equals_single_process_order_for_the_same_seed():
    ds = tensor_dataset()
    single = labels(DataLoader(ds, batch_size=4, shuffle=True, generator=kiln.Generator().manual_seed(3)))
    multi = labels(DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, generator=kiln.Generator().manual_seed(3)))
    assert multi == single and sorted(sum(single, [])) == list(range(23))
    kiln.manual_seed(11)
    single = labels(DataLoader(ds, batch_size=4, shuffle=True))
    kiln.manual_seed(11)
    assert labels(DataLoader(ds, batch_size=4, shuffle=True, num_workers=2)) == single


def test_options_accepted_and_collate_fn_runs_in_the_workers():
    ds = tensor_dataset(10)
    dl = DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True, prefetch_factor=3, timeout=30,
                    collate_fn=lambda batch: [int(y) for _, y in batch])
    assert list(dl) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(dl) == 3


def run_script(script):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(kiln.__file__))] + sys.path))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=120,
                         env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_spawn_and_forkserver_contexts():
    """The dataset is pickled to the workers, the batches back (in a script: spawn imports __main__)."""
    assert run_script("""
        import kiln, multiprocessing
        from kiln.utils.data import DataLoader, TensorDataset
        if __name__ == "__main__":
            ds = TensorDataset(kiln.arange(20.0).reshape(10, 2).bfloat16(), kiln.arange(10))
            for method in ("spawn", "forkserver", multiprocessing.get_context("spawn")):
                batches = list(DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context=method))
                print([y.tolist() for _, y in batches], batches[0][0].dtype)
    """).splitlines() == ["[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] kiln.bfloat16"] * 3


# ---- worker seeds, get_worker_info, worker_init_fn ----

def test_worker_info_seeds_and_worker_init_fn():
    assert get_worker_info() is None
    dl = DataLoader(WorkerState(), batch_size=None, num_workers=2, generator=kiln.Generator().manual_seed(123),
                    worker_init_fn=mark_init)
    samples = list(dl)
    base = _int64_seed(kiln.Generator().manual_seed(123))  # the iterator's one draw from the loader's generator
    assert [s["index"] for s in samples] == [0, 1, 2, 3]
    assert [s["id"] for s in samples] == [0, 1, 0, 1]  # round robin
    assert len({s["pid"] for s in samples}) == 2 and os.getpid() not in {s["pid"] for s in samples}
    for s in samples[:2]:  # each worker's first sample sees its freshly seeded generators
        wid = s["id"]
        assert s["num_workers"] == 2 and s["seed"] == base + wid and s["dataset_is_a_copy"]
        assert s["threads"] == 1 and s["init"] == wid
        assert s["random"] == random.Random(base + wid).random()
        assert s["numpy"] == np.random.RandomState(_generate_state(base, wid)).randint(1 << 30)
        assert s["kiln"] == kiln.rand(1, generator=kiln.Generator().manual_seed(base + wid)).item()
    assert samples[0]["random"] != samples[1]["random"]
    # Without a generator= the base seed comes from the default generator: kiln.manual_seed fixes it.
    kiln.manual_seed(5)
    first = [s["seed"] for s in DataLoader(WorkerState(), batch_size=None, num_workers=2)]
    kiln.manual_seed(5)
    assert [s["seed"] for s in DataLoader(WorkerState(), batch_size=None, num_workers=2)] == first


def test_numpy_seed_state_is_torchs():
    torch_worker = pytest.importorskip("torch.utils.data._utils.worker")
    for base in [0, 1, 123, 2 ** 32 + 7, 2 ** 63 - 1, 6148914691236517205]:
        for wid in range(3):
            assert _generate_state(base, wid) == torch_worker._generate_state(base, wid)


def test_worker_info_is_read_only():
    from kiln.utils.data._worker import WorkerInfo
    info = WorkerInfo(id=0, num_workers=1, seed=3, dataset=None)
    assert repr(info) == "WorkerInfo(id=0, num_workers=1, seed=3, dataset=None)"
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        info.id = 1


# ---- errors in workers, timeout ----

def test_worker_exception_is_raised_again_with_the_workers_traceback():
    with pytest.raises(ValueError) as e:
        list(DataLoader(Faulty(), batch_size=None, num_workers=2))
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback (most recent call "
                          "last):\n")
    assert 'raise ValueError(f"sample {i} is broken")' in msg and msg.rstrip().endswith("ValueError: sample 5 is broken")
    it = iter(DataLoader(Faulty(), batch_size=None, num_workers=2))
    assert [next(it) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process 1"):
        next(it)
    with pytest.raises(KeyError) as e:  # the next sample raises too: the iterator goes on after an error
        next(it)
    assert "Caught KeyError in DataLoader worker process 0.\nOriginal Traceback" in str(e.value)
    assert next(it) == 7
    del it


def failing_init(worker_id):
    raise RuntimeError(f"init of {worker_id} failed")


def test_worker_init_fn_exception_surfaces_on_that_workers_first_batch():
    with pytest.raises(RuntimeError, match=r"Caught RuntimeError in DataLoader worker process 0\.(.|\n)*init of 0 "
                                           r"failed"):
        list(DataLoader(tensor_dataset(8), batch_size=2, num_workers=2, worker_init_fn=failing_init))


def test_timeout():
    it = iter(DataLoader(Sleepy(), batch_size=None, num_workers=1, timeout=0.2))
    start = time.time()
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0\.2 seconds$"):
        next(it)
    assert time.time() - start < 0.9
    del it
    assert list(DataLoader(tensor_dataset(4), batch_size=2, num_workers=1, timeout=5))[1][1].tolist() == [2, 3]


class Crashing(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            os._exit(7)  # as if killed: no exception to send back
        return i


def test_a_worker_that_dies_is_reported(monkeypatch):
    import kiln.utils.data._worker as worker_module
    monkeypatch.setattr(worker_module, "MP_STATUS_CHECK_INTERVAL", 0.2)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(DataLoader(Crashing(), batch_size=None, num_workers=2))


# ---- worker lifetime: persistent workers, early exit ----

def test_persistent_workers_over_two_epochs():
    dl = DataLoader(Pid(), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [list(dl) for _ in range(2)]
    for e in epochs:
        assert [b[1].tolist() for b in e] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    pids = [{p for b in e for p in b[0].tolist()} for e in epochs]
    assert pids[0] == pids[1] and len(pids[0]) == 2 and os.getpid() not in pids[0]  # the same two processes
    workers = dl._iterator._workers
    assert all(w.is_alive() for w in workers)  # alive between epochs
    it = iter(dl)  # a third epoch, abandoned after one batch
    assert next(it)[1].tolist() == [0, 1]
    assert [b[1].tolist() for b in dl] == [[0, 1], [2, 3], [4, 5], [6, 7]]  # a fresh epoch starts from the top
    del dl, it
    gc.collect()
    assert all(w.exitcode is not None for w in workers)  # ended and reaped: no zombies


def test_abandoned_iteration_shuts_the_workers_down():
    it = iter(DataLoader(tensor_dataset(40), batch_size=2, num_workers=2))
    next(it)
    workers = it._workers
    del it
    gc.collect()
    assert all(w.exitcode == 0 for w in workers)
    it = iter(DataLoader(tensor_dataset(8), batch_size=2, num_workers=2))
    assert len(list(it)) == 4 and all(w.exitcode == 0 for w in it._workers)  # ended with the epoch


def test_no_hang_when_forking_after_openmp_use():
    """The parent runs big multi-threaded kernels first; a forked worker must not wait for the
    parent's OpenMP threads (it runs single-threaded)."""
    script = """
        import kiln
        from kiln.utils.data import DataLoader, Dataset
        kiln.set_num_threads(2)
        a = kiln.randn(2000, 2000) @ kiln.randn(2000, 2000)
        s = kiln.randn(4_000_000).sum() + a.sum()
        class Work(Dataset):
            def __len__(self):
                return 4
            def __getitem__(self, i):
                x = kiln.randn(300, 300)
                return (x @ x).sum() + kiln.randn(200_000).exp().sum() + kiln.get_num_threads()
        print([tuple(t.shape) for t in DataLoader(Work(), batch_size=2, num_workers=2)], kiln.get_num_threads())
    """
    assert run_script(script) == "[(2,), (2,)] 2"  # the parent keeps its threads


# ---- IterableDataset ----

@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_iterable_dataset_sharded_by_worker_info():
    ds = Sharded(3, 10)
    assert [b.tolist() for b in DataLoader(ds, batch_size=2)] == [[3, 4], [5, 6], [7, 8], [9]]
    # Each worker iterates its own share; batches alternate between workers; a worker that runs out stops.
    got = [b.tolist() for b in DataLoader(ds, batch_size=2, num_workers=2)]
    assert got == [[3, 4], [7, 8], [5, 6], [9]]
    assert [int(x) for x in DataLoader(ds, batch_size=None, num_workers=3)] == [3, 6, 9, 4, 7, 5, 8]
    assert [b.tolist() for b in DataLoader(ds, batch_size=2, num_workers=2, drop_last=True)] == [[3, 4], [7, 8],
                                                                                               [5, 6]]
    assert len(DataLoader(ds, batch_size=2)) == 4 and len(DataLoader(ds, batch_size=2, drop_last=True)) == 3
    dl = DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in dl] == got and [b.tolist() for b in dl] == got


def test_iterable_dataset_without_sharding_is_duplicated_per_worker():
    assert sorted(int(x) for x in DataLoader(Unsharded(), batch_size=None, num_workers=2)) == sorted(list(range(5)) * 2)
    assert [b.tolist() for b in DataLoader(Unsharded() + Unsharded(), batch_size=4)] == [[0, 1, 2, 3], [4, 0, 1, 2],
                                                                                        [3, 4]]
    assert isinstance(Unsharded() + Unsharded(), ChainDataset)


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_iterable_dataset_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader as TorchLoader
    from torch.utils.data import IterableDataset as TorchIterable
    from torch.utils.data import get_worker_info as torch_worker_info

    class TorchSharded(TorchIterable):
        def __iter__(self):
            info = torch_worker_info()
            if info is None:
                return iter(range(3, 10))
            per_worker = int(np.ceil(7 / info.num_workers))
            lo = 3 + info.id * per_worker
            return iter(range(lo, min(lo + per_worker, 10)))

    for options in [dict(batch_size=2, num_workers=2), dict(batch_size=None, num_workers=3),
                    dict(batch_size=2, num_workers=2, drop_last=True), dict(batch_size=3, num_workers=0)]:
        expected = [t if isinstance(t, int) else t.tolist() for t in TorchLoader(TorchSharded(), **options)]
        assert [t if isinstance(t, int) else t.tolist() for t in DataLoader(Sharded(3, 10), **options)] == expected


# ---- the loader's option rules ----

def test_option_errors_as_torch():
    ds = tensor_dataset(6)
    cases = [
        (dict(sampler=SequentialSampler(ds), shuffle=True), ValueError, "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), batch_size=3), ValueError,
         "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"),
        (dict(batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), drop_last=True), ValueError,
         "mutually exclusive"),
        (dict(batch_size=None, drop_last=True), ValueError, "batch_size=None option disables auto-batching"),
        (dict(num_workers=-1), ValueError, "num_workers option should be non-negative"),
        (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
        (dict(prefetch_factor=4), ValueError, "prefetch_factor option could only be specified in multiprocessing"),
        (dict(persistent_workers=True), ValueError, "persistent_workers option needs num_workers > 0"),
        (dict(multiprocessing_context="spawn"), ValueError, "multiprocessing_context can only be used with"),
        (dict(num_workers=1, multiprocessing_context="nope"), ValueError, "should specify a valid start method"),
        (dict(num_workers=1, multiprocessing_context=3), TypeError, "should be a valid context object"),
        (dict(batch_size=0), ValueError, "batch_size should be a positive integer value"),
    ]
    for options, error, message in cases:
        with pytest.raises(error, match=message):
            DataLoader(ds, **options)
    for options, message in [(dict(shuffle=True), "expected unspecified shuffle option"),
                             (dict(sampler=[0]), "expected unspecified sampler option"),
                             (dict(batch_sampler=[[0]]), "expected unspecified batch_sampler option")]:
        with pytest.raises(ValueError, match=message):
            DataLoader(Unsharded(), **options)
    dl = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        dl.batch_size = 3
    dl.num_workers = 0  # other attributes may change
    with pytest.raises(AssertionError):  # timeout needs workers, as torch
        iter(DataLoader(ds, timeout=1))


def test_sampler_and_batch_sampler_options():
    ds = tensor_dataset(10)
    dl = DataLoader(ds, sampler=[9, 0, 3], batch_size=2)
    assert labels(dl) == [[9, 0], [3]] and len(dl) == 2
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)
    dl = DataLoader(ds, batch_sampler=bs, num_workers=2)
    assert dl.batch_size is None and not dl.drop_last and labels(dl) == [[0, 1, 2], [3, 4, 5]] and len(dl) == 2
    dl = DataLoader(ds, batch_size=None, sampler=[4, 2])
    assert [y.item() for _, y in dl] == [4, 2] and len(dl) == 2
    assert [x for x in DataLoader([np.arange(2), np.arange(3)], batch_size=None)][1].tolist() == [0, 1, 2]


# ---- samplers: lengths and index sets ----

def test_samplers_lengths_and_index_sets():
    data = list(range(10))
    assert list(SequentialSampler(data)) == data and len(SequentialSampler(data)) == 10
    assert sorted(RandomSampler(data)) == data and len(RandomSampler(data)) == 10
    r = list(RandomSampler(data, num_samples=25))
    assert len(r) == 25 and sorted(r[:10]) == data and sorted(r[10:20]) == data and len(set(r[20:])) == 5
    r = list(RandomSampler(data, replacement=True, num_samples=70))
    assert len(r) == 70 and set(r) <= set(data) and len(RandomSampler(data, replacement=True, num_samples=70)) == 70
    s = SubsetRandomSampler([3, 5, 7, 11])
    assert sorted(s) == [3, 5, 7, 11] and len(s) == 4
    w = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50)
    draws = list(w)
    assert len(draws) == 50 == len(w) and set(draws) <= {1, 3} and draws.count(3) > draws.count(1)
    w = WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 6, replacement=False)
    assert sorted(w) == list(range(6))
    assert list(BatchSampler(SequentialSampler(data), 3, drop_last=False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(BatchSampler(SequentialSampler(data), 3, drop_last=True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(BatchSampler(data, 3, False)) == 4 and len(BatchSampler(data, 3, True)) == 3
    g = kiln.Generator().manual_seed(1)
    assert list(RandomSampler(data, generator=kiln.Generator().manual_seed(1))) == kiln.randperm(10, generator=g).tolist()


def test_sampler_errors_as_torch():
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        WeightedRandomSampler([1.0], 1, replacement=0)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(1, 2\)"):
        WeightedRandomSampler([[1.0, 2.0]], 1)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, drop_last=None)
    with pytest.raises(NotImplementedError):
        iter(Sampler(None))


def test_default_convert_as_torch():
    from kiln.utils.data import default_convert
    Point = collections.namedtuple("Point", "x y")
    out = default_convert([{"a": np.ones(2), "b": (np.int32(3), "s")}, Point(np.array(0), 1), np.array(["x"]), 4])
    assert out[0]["a"].dtype == kiln.float64 and out[0]["a"].tolist() == [1.0, 1.0]
    assert isinstance(out[0]["b"], list) and out[0]["b"][0].dtype == kiln.int32 and out[0]["b"][1] == "s"
    assert isinstance(out[1], Point) and out[1].x.dim() == 0 and out[1].y == 1
    assert isinstance(out[2], np.ndarray) and out[3] == 4
    assert default_convert(np.float64(1.5)).dtype == kiln.float64
    from kiln.utils.data import default_collate
    assert default_collate([np.float32(1), np.float32(2)]).dtype == kiln.float32  # NumPy scalars keep their dtype
    assert default_collate([np.int32(1), np.int32(2)]).tolist() == [1, 2]


def test_tensors_pickle_across_processes():
    for t in [kiln.arange(6.0).reshape(2, 3).t(), kiln.tensor([1.5, -3.25, 1e30]).bfloat16(),
              kiln.tensor([1.0, 2.0]).half(), kiln.tensor([True, False]), kiln.ones(2, requires_grad=True)]:
        u = pickle.loads(pickle.dumps(t))
        assert u.dtype == t.dtype and u.shape == t.shape and u.requires_grad == t.requires_grad
        assert (u.float() == t.float()).all().item()
    t = kiln.zeros(3)
    u = copy.copy(t)  # through __reduce_ex__: a tensor of its own, not a view of t
    u.add_(1)
    assert t.tolist() == [0.0, 0.0, 0.0] and u.tolist() == [1.0, 1.0, 1.0]


# ---- random orders and worker seeds as torch's ----
#
# Each test runs twice: with kiln's RNG, and with kiln's samplers and loader drawing from torch's
# generators through a shim, which checks that they make torch's RNG calls in torch's order (so a
# failure tells the call sequence from the stream apart).

class _TorchRandom:
    """Stands in for kiln._C in kiln.utils.data.sampler: random draws from torch."""

    def __init__(self, torch):
        import kiln.utils.data.sampler as sampler_module
        self._kiln_C, self._torch = sampler_module._C, torch
        self.Generator, self.randperm, self.randint, self.int64 = torch.Generator, torch.randperm, torch.randint, torch.int64
        self.empty = torch.empty

    def multinomial(self, weights, *args, **kwargs):
        return self._torch.multinomial(self._torch.as_tensor(weights.numpy()), *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._kiln_C, name)


@pytest.fixture(params=["kiln_rng", "torch_rng_shim"])
def rng(request, monkeypatch):
    torch = pytest.importorskip("torch")
    if request.param == "kiln_rng":
        return type("Rng", (), dict(seed=staticmethod(kiln.manual_seed),
                                    gen=staticmethod(lambda s: kiln.Generator().manual_seed(s))))
    import kiln.utils.data.sampler as sampler_module
    monkeypatch.setattr(sampler_module, "_C", _TorchRandom(torch))
    return type("Rng", (), dict(seed=staticmethod(torch.manual_seed),
                                gen=staticmethod(lambda s: torch.Generator().manual_seed(s))))


def test_random_sampler_orders_equal_torchs(rng):
    import torch
    from torch.utils.data import RandomSampler as TorchRandomSampler
    for options in [dict(), dict(num_samples=25), dict(replacement=True, num_samples=70)]:
        rng.seed(7)
        ours = list(RandomSampler(range(10), **options))
        torch.manual_seed(7)
        assert ours == list(TorchRandomSampler(range(10), **options))
        ours = list(RandomSampler(range(10), generator=rng.gen(3), **options))
        assert ours == list(TorchRandomSampler(range(10), generator=torch.Generator().manual_seed(3), **options))


def test_subset_and_weighted_sampler_orders_equal_torchs(rng):
    import torch
    from torch.utils.data import SubsetRandomSampler as TorchSubset
    from torch.utils.data import WeightedRandomSampler as TorchWeighted
    rng.seed(2)
    ours = list(SubsetRandomSampler([3, 5, 7, 11, 13]))
    torch.manual_seed(2)
    assert ours == list(TorchSubset([3, 5, 7, 11, 13]))
    weights = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
    for replacement in (True, False):
        ours = list(WeightedRandomSampler(weights, 5, replacement, generator=rng.gen(4)))
        assert ours == list(TorchWeighted(weights, 5, replacement, generator=torch.Generator().manual_seed(4)))


def test_shuffled_loader_order_equals_torchs(rng):
    import torch
    from torch.utils.data import DataLoader as TorchLoader
    data = list(range(23))
    for workers in (0, 2):
        ours = [b.tolist() for b in DataLoader(data, batch_size=4, shuffle=True, num_workers=workers,
                                               generator=rng.gen(9))]
        theirs = [b.tolist() for b in TorchLoader(data, batch_size=4, shuffle=True, num_workers=workers,
                                                  generator=torch.Generator().manual_seed(9))]
        assert ours == theirs
    rng.seed(9)
    dl = DataLoader(data, batch_size=4, shuffle=True)
    ours = [[b.tolist() for b in dl] for _ in range(2)]  # two epochs: two base seeds, two sampler seeds
    torch.manual_seed(9)
    dl = TorchLoader(data, batch_size=4, shuffle=True)
    assert ours == [[b.tolist() for b in dl] for _ in range(2)]


class TorchWorkerSeed:
    """A dataset (for torch's loader) giving the torch worker's seed."""

    def __len__(self):
        return 2

    def __getitem__(self, i):
        import torch.utils.data
        return torch.utils.data.get_worker_info().seed


def test_worker_seeds_equal_torchs(rng):
    import torch
    from torch.utils.data import DataLoader as TorchLoader
    ours = [s["seed"] for s in DataLoader(WorkerState(), batch_size=None, num_workers=2, generator=rng.gen(123))][:2]
    theirs = [int(s) for s in TorchLoader(TorchWorkerSeed(), batch_size=None, num_workers=2,
                                          generator=torch.Generator().manual_seed(123))]
    assert ours == theirs
    rng.seed(8)
    ours = [s["seed"] for s in DataLoader(WorkerState(), batch_size=None, num_workers=2)][:2]
    torch.manual_seed(8)
    assert ours == [int(s) for s in TorchLoader(TorchWorkerSeed(), batch_size=None, num_workers=2)]
