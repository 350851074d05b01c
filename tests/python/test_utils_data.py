"""kiln.utils.data: batching, drop_last, seeded shuffling and collation, as torch.utils.data."""
import collections

import numpy as np
import pytest

import kiln
from kiln.utils.data import DataLoader, Dataset, TensorDataset, default_collate

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
    assert out["c"][0].dtype == kiln.float64 and out["c"][1] == ["s", "t"]
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
    with pytest.raises(NotImplementedError):
        loader(generator=object())
    with pytest.raises(NotImplementedError):
        Dataset()[0]
