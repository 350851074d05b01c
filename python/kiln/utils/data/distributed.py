"""torch.utils.data.distributed.DistributedSampler: each of `num_replicas` processes reads its own
share of the dataset (every num_replicas-th index from its rank), padded by wrapping around (or cut,
with drop_last) to equal shares; with shuffle, one permutation per epoch drawn from a generator
seeded with seed + epoch, so every process draws the same one."""
import math

from ... import distributed as dist
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _from_process_group(value, ask):
    if value is not None:
        return value
    if not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return ask()


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        num_replicas = _from_process_group(num_replicas, dist.get_world_size)
        rank = _from_process_group(rank, dist.get_rank)
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # the tail that would need padding is dropped instead: equal shares of what remains
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        from ... import Generator, randperm
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            order = randperm(n, generator=g).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[:self.total_size]
        else:
            missing = self.total_size - len(order)
            while missing > 0:  # wrap around, as often as a tiny dataset needs
                order += order[:missing]
                missing = self.total_size - len(order)
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Another permutation for the next epoch (call it before each epoch's DataLoader iterator)."""
        self.epoch = epoch
