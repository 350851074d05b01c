"""pyGAT's sparse GAT (tests/python/programs/gat_sparse.py: SpGAT with its SpecialSpmmFunction, a custom
autograd Function over torch.sparse_coo_tensor + torch.matmul that saves the sparse tensor for backward)
trained under kiln and under Debian's torch 1.13 with the same seed: kiln draws torch's random numbers,
so both start from the same weights and drop the same elements, and every epoch's losses must agree.
Run twice: with pyGAT's Function, and with torch.sparse.mm's own gradient for the values."""
import os
import sys

import numpy as np
import pytest
import torch

import kiln

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs"))
import gat_sparse  # noqa: E402

SMALL = dict(n_nodes=120, n_feats=60, n_classes=3, hidden=8, nb_heads=4, epochs=8)


@pytest.mark.parametrize("spmm", ["function", "autograd"])
@pytest.mark.parametrize("dropout", [0.0, 0.6])
def test_spgat_losses_match_torch(spmm, dropout):
    ref = gat_sparse.run(torch, dropout=dropout, spmm=spmm, **SMALL)
    got = gat_sparse.run(kiln, dropout=dropout, spmm=spmm, **SMALL)
    for k, v in ref["initial"].items():  # xavier_normal_ draws torch's numbers
        np.testing.assert_array_equal(got["initial"][k], v, err_msg=k)
    assert len(got["train"]) == len(ref["train"]) == SMALL["epochs"]
    np.testing.assert_allclose(got["train"], ref["train"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["val"], ref["val"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["test_loss"], ref["test_loss"], rtol=1e-4, atol=1e-5)
    assert got["test_acc"] == ref["test_acc"]
    if dropout == 0.0:  # it learns (the losses go down), so the gradients are not all zero
        assert ref["train"][-1] < ref["train"][0] - 0.05
