"""Samplers: the order in which a DataLoader visits a dataset's indices, as torch.utils.data."""
from ... import _C


def _check_generator(generator):
    if generator is not None and not isinstance(generator, _C.Generator):
        raise TypeError(f"generator must be a kiln.Generator or None, got {type(generator).__name__}")


def _int64_seed(generator=None):
    """torch.empty((), dtype=torch.int64).random_(generator=generator).item(): the draw torch's
    RandomSampler and DataLoader iterators take a seed from (one per call, in the same order)."""
    return int(_C.empty((), dtype=_C.int64).random_(generator=generator).item())  # in [0, 2**63)


class Sampler:
    """Base class of samplers: iterating one gives dataset indices (or lists of them)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (with replacement: num_samples independent draws),
    from `generator`; without one, from a generator seeded by the default generator each
    epoch, as torch, so kiln.manual_seed makes the order reproducible."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        _check_generator(generator)
        self.data_source, self.replacement, self._num_samples, self.generator = (
            data_source, replacement, num_samples, generator)
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = _int64_seed()
            generator = _C.Generator()
            generator.manual_seed(seed)
        if self.replacement:
            for _ in range(self.num_samples // 32):  # in chunks, as torch
                yield from _C.randint(n, (32,), generator=generator).tolist()
            yield from _C.randint(n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _C.randperm(n, generator=generator).tolist()
            yield from _C.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a randperm from `generator` each epoch)."""

    def __init__(self, indices, generator=None):
        _check_generator(generator)
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in _C.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices of `weights` drawn with probabilities proportional to the weights
    (kiln.multinomial, with or without replacement)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        _check_generator(generator)
        from ..._creation import as_tensor
        weights_tensor = as_tensor(weights, dtype=_C.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights, self.num_samples, self.replacement, self.generator = (
            weights_tensor, num_samples, replacement, generator)

    def __iter__(self):
        rand_tensor = _C.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from iter(rand_tensor.tolist())

    def __len__(self):
        return self.num_samples


class _InfiniteConstantSampler(Sampler):
    """None forever: the index sampler of an IterableDataset (whose iterator decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


class BatchSampler(Sampler):
    """Lists of batch_size indices from `sampler`; the last one shorter unless drop_last."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
