"""What a DataLoader worker process runs, and what it shares with the main process, as torch's
torch/utils/data/_utils/{worker,fetch}.py and torch._utils.ExceptionWrapper (1.13).

A worker takes (task index, sampler index) pairs from its index queue, fetches and collates the
samples, and puts (task index, batch) on the result queue; None on the index queue ends it."""
import atexit
import os
import queue
import random
import sys
import traceback

MP_STATUS_CHECK_INTERVAL = 5.0  # seconds between the main process's checks that its workers are alive
_WORKER_POLL_INTERVAL = 0.1  # seconds between a waiting worker's checks for shutdown and its parent

python_exit_status = False  # set at interpreter exit: loaders then leave their workers to multiprocessing


def _set_python_exit_flag():
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)


class KeyErrorMessage(str):
    """A str whose repr is itself (KeyError shows repr() of its argument)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, to raise again in another process."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type == KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except TypeError:  # an exception type that takes other arguments
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:  # no frame -> exception -> traceback -> frame cycle: the iterator is freed (and its
            del exception  # workers shut down) as soon as the caller drops the exception


class WorkerInfo:
    """id, num_workers, seed and dataset (this worker's copy) of the worker process; read-only."""
    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        return f"{self.__class__.__name__}({', '.join(f'{k}={getattr(self, k)}' for k in self.__keys)})"


_worker_info = None


def get_worker_info():
    """In a DataLoader worker: its WorkerInfo (id, num_workers, seed, dataset); None in the main process."""
    return _worker_info


class _IterableDatasetStopIteration:
    """A worker's IterableDataset copy is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Persistent workers: start the next epoch."""

    def __init__(self, seed=None):
        self.seed = seed


def _generate_state(base_seed, worker_id):
    """The NumPy seed of a worker (4 uint32), as torch: NumPy's SeedSequence hashing of
    [worker_id, base_seed low 32 bits, base_seed high 32 bits, 0]."""
    INIT_A, MULT_A, INIT_B, MULT_B = 0x43b0d7e5, 0x931e8875, 0x8b51f9dd, 0x58f38ded
    MIX_MULT_L, MIX_MULT_R, XSHIFT, MASK32 = 0xca01f9dd, 0x4973f715, 4 * 8 // 2, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_A = INIT_A

    def hash(value):
        nonlocal hash_const_A
        value = (value ^ hash_const_A) & MASK32
        hash_const_A = (hash_const_A * MULT_A) & MASK32
        value = (value * hash_const_A) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        result = (((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32)) & MASK32
        return (result ^ (result >> XSHIFT)) & MASK32

    for i in range(len(pool)):
        pool[i] = hash(entropy[i])
    for i_src in range(len(pool)):
        for i_dst in range(len(pool)):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash(pool[i_src]))
    hash_const_B = INIT_B
    state = []
    for i_dst in range(4):
        data_val = (pool[i_dst] ^ hash_const_B) & MASK32
        hash_const_B = (hash_const_B * MULT_B) & MASK32
        data_val = (data_val * hash_const_B) & MASK32
        state.append((data_val ^ (data_val >> XSHIFT)) & MASK32)
    return state


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if getattr(self.dataset, "__getitems__", None):
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    return (_IterableDatasetFetcher if iterable else _MapDatasetFetcher)(dataset, auto_collation, collate_fn,
                                                                        drop_last)


def _worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, persistent_workers):
    """A worker process's body. Single-threaded first of all: a forked child must never start an
    OpenMP team (libgomp's threads are not forked with the parent and would be waited for forever)."""
    import kiln
    try:
        kiln.set_num_threads(1)
        seed = base_seed + worker_id
        random.seed(seed)
        kiln.manual_seed(seed)
        import numpy as np
        np.random.seed(_generate_state(base_seed, worker_id))

        global _worker_info
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        manager_pid = os.getppid()
        while os.getppid() == manager_pid:  # ends when the main process is gone
            try:
                r = index_queue.get(timeout=_WORKER_POLL_INTERVAL)
            except queue.Empty:
                if done_event.is_set():  # shutting down, nothing left to drain (the None may never come
                    break  # if the main process dropped its queues first, e.g. collected in a cycle)
                continue
            if isinstance(r, _ResumeIteration):  # persistent workers: a new epoch
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                assert done_event.is_set() or iteration_end
                break
            if done_event.is_set() or iteration_end:
                continue  # draining: the main process is shutting down or this epoch ended here
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
