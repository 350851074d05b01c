"""A range or a numpy integer/bool array indexes a tensor as the list it holds would, as in torch
("What is torch.nn really?": -input[range(target.shape[0]), target].mean())."""
import numpy as np
import torch

import kiln


def test_range_and_ndarray_indices_match_torch():
    for lib_index in [lambda lib: (range(4), lib.tensor([0, 2, 1, 0])), lambda lib: range(1, 3),
                      lambda lib: np.array([3, 0]), lambda lib: range(0),
                      lambda lib: np.array([True, False, True, False]), lambda lib: (np.array([1, 2]), range(2))]:
        want = torch.arange(12.).reshape(4, 3)[lib_index(torch)]
        got = kiln.arange(12.).reshape(4, 3)[lib_index(kiln)]
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_range_index_assignment_and_gradient():
    out = []
    for lib in (torch, kiln):
        x = lib.zeros(3, 3)
        x[range(3), range(3)] = 1.0
        w = lib.arange(9., requires_grad=True)
        w.reshape(3, 3)[range(3), [2, 1, 0]].sum().backward()
        out.append((x.numpy(), w.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])
