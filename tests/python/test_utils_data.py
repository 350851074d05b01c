"""kiln.utils.data: batching, drop_last, seeded shuffling (RandomSampler, generator=) and collation,
as torch.utils.data."""
import collections

import numpy as np
import pytest

import kiln
from kiln.utils.data import (BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler, TensorDataset,
                             default_collate)

X = np.arange(20.0).reshape(10, 2)
Y = np.arange(10) % 3


def loader(**options):
    return DataLoader(TensorDataset(kiln.tensor(X), kiln.tensor(Y)), **options)


def test_batches_in_order_with_a_short_last_batch():
    batches = list(loader(batch_size=4))
    assert [tuple(x.shape) for x, _ in batches] == [(4, 2), (4, 2), (2, 2)]
    np.testing.assert_array_equal(np.concatenate([x.numpy() for x, _ in batches]), X)
    np.testing.assert_array_equal(np.concatenate([y.numpy() for _, y in batches]), Y)
    assert len(loader(batch_size=4)) == 3


def test_drop_last():
    dl = loader(batch_size=4, drop_last=True)
    assert len(dl) == 2 and [tuple(x.shape) for x, _ in dl] == [(4, 2), (4, 2)]


def test_shuffle_is_a_seeded_permutation():
    kiln.manual_seed(3)
    first = np.concatenate([y.numpy() for _, y in loader(batch_size=3, shuffle=True)])
    xs = np.concatenate([x.numpy()[:, 0] for x, _ in loader(batch_size=3, shuffle=True)])
    assert sorted((xs / 2).astype(int).tolist()) == list(range(10))  # every sample once
    kiln.manual_seed(3)
    again = np.concatenate([y.numpy() for _, y in loader(batch_size=3, shuffle=True)])
    np.testing.assert_array_equal(first, again)
    orders = {tuple(np.concatenate([x.numpy()[:, 0] for x, _ in loader(batch_size=10, shuffle=True)]))
              for _ in range(5)}
    assert len(orders) > 1  # epochs differ


def test_default_collate_structures():
    Point = collections.namedtuple("Point", "x y")
    batch = [{"a": kiln.tensor([1.0, 2.0]), "b": 3, "c": (0.5, "s")}, {"a": kiln.tensor([3.0, 4.0]), "b": 4,
                                                                      "c": (1.5, "t")}]
    out = default_collate(batch)
    np.testing.assert_array_equal(out["a"].numpy(), [[1, 2], [3, 4]])
    assert out["b"].dtype == kiln.int64 and out["b"].tolist() == [3, 4]
    assert out["c"][0].dtype == kiln.float64 and out["c"][1] == ("s", "t")  # torch: the zip(*batch) tuple
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(p, Point) and p.x.tolist() == [1, 3]
    arrays = default_collate([np.ones(2, dtype=np.float32), np.zeros(2, dtype=np.float32)])
    assert arrays.dtype == kiln.float32 and tuple(arrays.shape) == (2, 2)


def test_custom_dataset_and_collate_fn():
    class Squares(Dataset):
        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return 5
    assert [b.tolist() for b in DataLoader(Squares(), batch_size=2)] == [[0, 1], [4, 9], [16]]
    assert list(DataLoader(Squares(), batch_size=2, collate_fn=sum)) == [1, 13, 16]
    assert list(DataLoader(Squares(), batch_size=None)) == [0, 1, 4, 9, 16]


def test_bad_arguments():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(kiln.ones(3), kiln.ones(4))
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        loader(batch_size=0)
    with pytest.raises(ValueError, match="mutually exclusive"):
        loader(sampler=[0, 1], shuffle=True)
    with pytest.raises(TypeError, match="kiln.Generator"):
        loader(shuffle=True, generator=object())
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        loader(batch_size=None, drop_last=True)
    with pytest.raises(NotImplementedError):
        Dataset()[0]


def order(dl):
    """The dataset indices in the order the loader gave them (sample i has x[0] = 2 i)."""
    return (np.concatenate([x.numpy()[:, 0] for x, _ in dl]) / 2).astype(int).tolist()


def test_shuffle_with_a_generator_is_randperm_of_that_generator():
    """As torch: an epoch draws a base seed (one random_()) and then randperm(n) from generator=g;
    the default generator is untouched."""
    state = kiln.get_rng_state()
    a = order(loader(batch_size=4, shuffle=True, generator=kiln.Generator().manual_seed(7)))
    b = order(loader(batch_size=4, shuffle=True, generator=kiln.Generator().manual_seed(7)))
    assert a == b and sorted(a) == list(range(10))
    g = kiln.Generator().manual_seed(7)
    kiln.empty((), dtype=kiln.int64).random_(generator=g)
    assert a == kiln.randperm(10, generator=g).tolist()
    np.testing.assert_array_equal(kiln.get_rng_state().numpy(), state.numpy())
    g = kiln.Generator().manual_seed(7)
    dl = loader(batch_size=4, shuffle=True, generator=g)
    epochs = [order(dl) for _ in range(4)]
    assert epochs[0] == a and len({tuple(e) for e in epochs}) > 1  # the generator moves on between epochs
    others = {tuple(order(loader(batch_size=10, shuffle=True, generator=kiln.Generator().manual_seed(s))))
              for s in range(8)}
    assert len(others) > 4


def test_shuffle_without_a_generator_draws_from_the_default_one():
    kiln.manual_seed(5)
    a = order(loader(batch_size=3, shuffle=True))
    after = kiln.get_rng_state()
    kiln.manual_seed(5)
    assert order(loader(batch_size=3, shuffle=True)) == a
    kiln.manual_seed(5)
    assert not np.array_equal(kiln.get_rng_state().numpy(), after.numpy())  # an epoch draws a seed


def test_random_sampler():
    data = list(range(6))
    g = kiln.Generator().manual_seed(1)
    two_epochs = list(RandomSampler(data, num_samples=15, generator=g))
    assert len(two_epochs) == 15 and sorted(two_epochs[:6]) == data and sorted(two_epochs[6:12]) == data
    drawn = list(RandomSampler(data, replacement=True, num_samples=70, generator=kiln.Generator().manual_seed(2)))
    assert len(drawn) == 70 and set(drawn) <= set(data) and len(set(drawn)) == 6
    assert drawn == list(RandomSampler(data, replacement=True, num_samples=70,
                                       generator=kiln.Generator().manual_seed(2)))
    assert len(RandomSampler(data)) == 6 and len(RandomSampler(data, num_samples=3)) == 3
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(data, num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(data, replacement=1)
    with pytest.raises(TypeError, match="kiln.Generator"):
        RandomSampler(data, generator=3)


def test_batch_sampler_and_sequential_sampler():
    seq = SequentialSampler(range(10))
    assert list(seq) == list(range(10)) and len(seq) == 10
    assert list(BatchSampler(seq, 3, False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(BatchSampler(seq, 3, True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(BatchSampler(seq, 3, False)) == 4 and len(BatchSampler(seq, 3, True)) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(seq, 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        BatchSampler(seq, 2, None)
    dl = loader(batch_sampler=BatchSampler(SequentialSampler(range(10)), 4, True))
    assert len(dl) == 2 and [y.tolist() for _, y in dl] == [Y[:4].tolist(), Y[4:8].tolist()]
    sampled = loader(batch_size=5, sampler=RandomSampler(range(10), generator=kiln.Generator().manual_seed(3)))
    assert order(sampled) == kiln.randperm(10, generator=kiln.Generator().manual_seed(3)).tolist()


def test_random_split_subset_and_concat():
    from kiln.utils.data import ConcatDataset, Subset, random_split
    ds = TensorDataset(kiln.arange(10), kiln.arange(10) * 2)
    g = kiln.Generator().manual_seed(3)
    a, b = random_split(ds, [7, 3], generator=g)
    taken = sorted(int(a[i][0]) for i in range(len(a))) + sorted(int(b[i][0]) for i in range(len(b)))
    assert len(a) == 7 and len(b) == 3 and sorted(taken) == list(range(10))
    a2, _ = random_split(ds, [7, 3], generator=kiln.Generator().manual_seed(3))
    assert [int(a2[i][0]) for i in range(7)] == [int(a[i][0]) for i in range(7)]
    parts = random_split(ds, [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [5, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])
    sub = Subset(ds, [4, 1])
    assert [int(sub[i][1]) for i in range(2)] == [8, 2]
    both = ConcatDataset([sub, ds])
    assert len(both) == 12 and int(both[2][0]) == 0 and int(both[-1][0]) == 9
    assert len(sub + ds) == 12
    xs = [x for x, _ in DataLoader(both, batch_size=5)]
    assert [len(x) for x in xs] == [5, 5, 2]


def test_stack_dataset_and_collate_paths():
    # torch 2.2's StackDataset (1.13 lacks it): hand-checked
    from kiln.utils.data import StackDataset, TensorDataset
    a, b = kiln.arange(4.0), kiln.arange(4) * 10
    s = StackDataset(TensorDataset(a), b)
    assert len(s) == 4 and float(s[2][0][0]) == 2.0 and int(s[2][1]) == 20
    d = StackDataset(x=a, y=b)
    assert set(d[1]) == {"x", "y"} and int(d[1]["y"]) == 10
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset(a, kiln.arange(3))
    with pytest.raises(ValueError, match="both types are given"):
        StackDataset(a, y=b)
    with pytest.raises(ValueError, match="At least one dataset"):
        StackDataset()
    from kiln.utils.data._utils.collate import default_collate
    import torch
    import torch.utils.data._utils.collate as tc
    got = default_collate([(kiln.ones(2), 1), (kiln.zeros(2), 2)])
    want = tc.default_collate([(torch.ones(2), 1), (torch.zeros(2), 2)])
    assert type(got) is type(want)
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
