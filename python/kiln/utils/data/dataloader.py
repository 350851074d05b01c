"""DataLoader: batches of a dataset's samples, in order or shuffled (RandomSampler, drawing from
generator= or, without one, from the default generator that kiln.manual_seed seeds).

Loading runs in this process (num_workers is accepted for torch compatibility and ignored).
"""
import numbers

import numpy as np

from ... import _C
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _check_generator


def default_collate(batch):
    """Stacks a list of samples: tensors (and NumPy arrays, numbers) into one tensor with a leading
    batch dim; tuples, lists and dicts field by field, as torch's default_collate."""
    import kiln
    elem = batch[0]
    if isinstance(elem, _C.TensorBase):
        return kiln.stack(list(batch))
    if isinstance(elem, np.ndarray):
        return kiln.stack([kiln.as_tensor(b) for b in batch])
    if isinstance(elem, bool):
        return kiln.tensor(batch, dtype=kiln.bool)
    if isinstance(elem, numbers.Integral):
        return kiln.tensor(batch, dtype=kiln.int64)
    if isinstance(elem, numbers.Real):
        return kiln.tensor(batch, dtype=kiln.float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, dict):
        return {key: default_collate([b[key] for b in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple keeps its type
        return type(elem)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(field)) for field in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(elem).__name__}")


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None):
        if batch_size is not None and (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                                       or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                             "and drop_last")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        _check_generator(generator)
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:  # as torch: the loader's generator shuffles
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last, self.generator = dataset, batch_size, drop_last, generator
        self.sampler, self.batch_sampler, self.num_workers = sampler, batch_sampler, num_workers
        # Batches (from batch_sampler) are collated; single samples (batch_size=None) pass as they are.
        self.collate_fn = collate_fn if collate_fn is not None else (default_collate if batch_sampler is not None
                                                                     else (lambda x: x))

    def __iter__(self):
        # As torch's _BaseDataLoaderIter: starting an iteration draws a base seed (torch's worker
        # seed) from the loader's generator, so the random stream moves exactly as in torch.
        _C.empty((), dtype=_C.int64).random_(generator=self.generator)
        return self._batches()

    def _batches(self):
        if self.batch_sampler is None:  # batch_size=None: one sample at a time, not collated into a batch
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
