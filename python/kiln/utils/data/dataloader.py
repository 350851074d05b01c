"""DataLoader: batches of a dataset's samples, in order or shuffled (RandomSampler, drawing from
generator= or, without one, from the default generator that kiln.manual_seed seeds), as torch 1.13.

num_workers=0 loads in this process. num_workers > 0 starts that many worker processes (fork on
Linux, as torch, or multiprocessing_context=) that fetch and collate batches; the main process hands
out batch indices round robin, at most prefetch_factor per worker ahead, and returns the batches in
the sampler's order. Workers run single-threaded, which keeps a forked worker clear of the OpenMP
thread pool the parent may have started. Each iterator draws a base seed from the loader's generator
(or the default generator) as torch does; worker i seeds random, kiln and NumPy from it.
"""
import collections.abc
import itertools
import math
import multiprocessing
import numbers
import os
import queue
import warnings

import numpy as np

from ... import _C
from . import _worker
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _InfiniteConstantSampler, _check_generator, \
    _int64_seed


def default_collate(batch):
    """Stacks a list of samples: tensors (and NumPy arrays, numbers) into one tensor with a leading
    batch dim; tuples, lists and dicts field by field, as torch's default_collate."""
    import kiln
    elem = batch[0]
    if isinstance(elem, _C.TensorBase):
        return kiln.stack(list(batch))
    if isinstance(elem, np.ndarray):
        return kiln.stack([kiln.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):  # NumPy scalars keep their dtype
        return kiln.as_tensor(np.array(batch))
    if isinstance(elem, int):  # torch.tensor(batch): the dtype inferred from every element (bool too)
        return kiln.tensor(list(batch))
    if isinstance(elem, numbers.Integral):
        return kiln.tensor(batch, dtype=kiln.int64)
    if isinstance(elem, numbers.Real):
        return kiln.tensor(batch, dtype=kiln.float64)
    if isinstance(elem, (str, bytes)):
        return batch  # as given: a field of a tuple batch stays a tuple (torch's zip(*batch))
    if isinstance(elem, dict):
        return {key: default_collate([b[key] for b in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple keeps its type
        return type(elem)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(field) for field in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(elem).__name__}")


def default_convert(data):
    """batch_size=None: NumPy arrays and scalars in a sample become tensors (string and object
    arrays stay), inside mappings and sequences too; tuples become lists, as torch."""
    import kiln
    if isinstance(data, _C.TensorBase):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and data.dtype.kind in "SaUO":
            return data
        return kiln.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple keeps its type
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


class DataLoader:
    """Batches (or single samples, batch_size=None) of a map-style or iterable dataset, loaded in
    this process (num_workers=0) or in worker processes; torch 1.13's arguments and rules."""
    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=2, persistent_workers=False,
                 pin_memory_device=""):
        if batch_size is not None and (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                                       or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor != 2:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing.")
        assert prefetch_factor > 0
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        _check_generator(generator)
        self.dataset, self.num_workers, self.prefetch_factor = dataset, num_workers, prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device  # CPU only: nothing to pin
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context = multiprocessing_context

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:  # the dataset's iterator gives the order: no sampler, no shuffle
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:  # as torch: the loader's generator shuffles
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            else:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last, self.sampler, self.batch_sampler = batch_size, drop_last, sampler, batch_sampler
        self.generator = generator
        if collate_fn is None:  # batches are collated; single samples (batch_size=None) only converted
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid_start_methods = multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid_start_methods:
                        raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                         f"{valid_start_methods!r}, but got "
                                         f"multiprocessing_context={multiprocessing_context!r}")
                    multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
                if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                    raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                    f"specifying the start method, but got "
                                    f"multiprocessing_context={multiprocessing_context}")
            else:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):  # what the iterator draws: batches of indices, or single indices
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        # Persistent workers: one iterator (and its processes) for the loader's lifetime, reset each epoch.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._iterable:  # an estimate from the dataset's __len__, as torch
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        if self.num_workers == 0:
            return
        try:
            max_workers = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            max_workers = os.cpu_count()
        if max_workers is not None and self.num_workers > max_workers:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. Our suggested "
                          f"max number of worker in current system is {max_workers}, which is smaller than what this "
                          f"DataLoader is going to create. Please be aware that excessive worker creation might get "
                          f"DataLoader running slow or even freeze, lower the worker number to avoid potential "
                          f"slowness/freeze if necessary.")


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset, self._iterable = loader.dataset, loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation, self._drop_last = loader._auto_collation, loader.drop_last
        self._index_sampler, self._num_workers = loader._index_sampler, loader.num_workers
        self._prefetch_factor, self._timeout, self._collate_fn = loader.prefetch_factor, loader.timeout, loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # As torch, even without workers: one draw from the loader's generator (default one when None).
        self._base_seed = _int64_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        if self._sampler_iter is None:
            self._reset()
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called} "
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker.")
            warnings.warn(msg)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        assert self._timeout == 0
        assert self._num_workers == 0
        self._dataset_fetcher = _worker._create_fetcher(self._iterable, self._dataset, self._auto_collation,
                                                        self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Workers fetch the batches; this process sends indices and returns results in send order.

    Task i (the i-th index the sampler gave) goes to a worker round robin; _task_info[i] is (worker,)
    while outstanding and (worker, data) when it came back before its turn. A None on a worker's index
    queue ends it; shutdown sets the done event first so that workers stop fetching."""

    def __init__(self, loader):
        super().__init__(loader)
        assert self._num_workers > 0 and self._prefetch_factor > 0
        context = loader.multiprocessing_context or multiprocessing
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = context.Queue()
        self._shutdown = False
        self._workers_done_event = context.Event()
        self._index_queues, self._workers = [], []
        try:
            for i in range(self._num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()
                w = context.Process(target=_worker._worker_loop,
                                    args=(self._iterable, self._dataset, index_queue, self._worker_result_queue,
                                          self._workers_done_event, self._auto_collation, self._collate_fn,
                                          self._drop_last, self._base_seed, self._worker_init_fn, i,
                                          self._num_workers, self._persistent_workers))
                w.daemon = True
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:  # e.g. a dataset that spawn cannot pickle: end the workers already started
            self._workers_status = [True] * len(self._workers)
            self._shutdown_workers()
            raise
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to send to a worker
        self._rcvd_idx = 0  # the next task to return from __next__
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: wait until every worker has started the new epoch
            for idx in range(self._num_workers):
                self._index_queues[idx].put(_worker._ResumeIteration())
            resume_iteration_cnt = self._num_workers
            while resume_iteration_cnt > 0:
                return_idx, return_data = self._get_data()
                if isinstance(return_idx, _worker._ResumeIteration):
                    assert return_data is None
                    resume_iteration_cnt -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout=None):
        try:  # waiting MP_STATUS_CHECK_INTERVAL at a time, checking in between that the workers live
            return True, self._data_queue.get(timeout=_worker.MP_STATUS_CHECK_INTERVAL if timeout is None else timeout)
        except Exception as e:
            failed_workers = []
            for worker_id, w in enumerate(self._workers):
                if self._workers_status[worker_id] and not w.is_alive():
                    failed_workers.append(w)
                    self._mark_worker_as_unavailable(worker_id)
            if failed_workers:
                pids_str = ", ".join(str(w.pid) for w in failed_workers)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids_str}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if success:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _next_data(self):
        while True:
            # Skip the tasks of workers whose IterableDataset ended: they will never come back.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                worker_id = info[0]
                if len(info) == 2 or self._workers_status[worker_id]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                data = self._task_info.pop(self._rcvd_idx)[1]
                return self._process_data(data)
            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._iterable and isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)  # keep it until its turn
            else:
                del self._task_info[idx]
                return self._process_data(data)

    def _try_put_index(self):
        assert self._tasks_outstanding < self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        assert self._workers_status[worker_id] or (self._persistent_workers and shutdown)
        self._index_queues[worker_id].put(None)  # the worker ends when it reads this
        self._workers_status[worker_id] = False
        assert self._workers_done_event.is_set() == shutdown

    def _shutdown_workers(self):
        if _worker is None or _worker.python_exit_status is True or _worker.python_exit_status is None:
            return  # interpreter exit: multiprocessing ends the daemonic workers
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for w in self._workers:
                w.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():  # did not end in time: no zombie left behind
                    w.terminate()
                    w.join()

    def __del__(self):
        if getattr(self, "_workers_done_event", None) is not None:
            self._shutdown_workers()
