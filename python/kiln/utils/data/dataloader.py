"""DataLoader: batches of a dataset's samples, in order or shuffled by kiln's seeded generator.

Loading runs in this process (num_workers is accepted for torch compatibility and ignored).
"""
import math
import numbers

import numpy as np

from ... import _C


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
        if generator is not None:
            raise NotImplementedError("DataLoader(generator=...): kiln.Generator does not exist yet; "
                                      "seed the global generator with kiln.manual_seed")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.sampler, self.batch_sampler, self.num_workers = sampler, batch_sampler, num_workers
        self.collate_fn = collate_fn if collate_fn is not None else (default_collate if batch_size is not None
                                                                     else (lambda x: x))

    def _indices(self):
        if self.sampler is not None:
            return list(self.sampler)
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        import kiln
        # A permutation from kiln's generator: the same seed gives the same order.
        keys = kiln.rand([n], dtype=kiln.float64).numpy()
        return np.argsort(keys, kind="stable").tolist()

    def _batches(self):
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        indices = self._indices()
        if self.batch_size is None:
            yield from indices
            return
        for start in range(0, len(indices), self.batch_size):
            chunk = indices[start:start + self.batch_size]
            if len(chunk) < self.batch_size and self.drop_last:
                return
            yield chunk

    def __iter__(self):
        for chunk in self._batches():
            if self.batch_size is None and self.batch_sampler is None:
                yield self.collate_fn(self.dataset[chunk])
            else:
                yield self.collate_fn([self.dataset[i] for i in chunk])

    def __len__(self):
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
