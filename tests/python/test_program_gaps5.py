"""What the programs of test_programs_part5.py found missing or different in kiln, each checked against
torch 1.13."""
import numpy as np
import pytest
import torch

import kiln


def k(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def close(a, b, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


# ---- pyg_free_gnn: Tensor.index_reduce_ on a fresh buffer, with a source that requires grad ------------
@pytest.mark.parametrize("reduce", ["mean", "prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [False, True])
def test_index_reduce_inplace_backward(reduce, include_self):
    torch.manual_seed(0)
    src_t = torch.randn(7, 3, requires_grad=True)
    base_t = torch.randn(4, 3, requires_grad=True)
    index = torch.tensor([0, 2, 2, 3, 0, 0, 2])
    src_k, base_k = k(src_t).requires_grad_(), k(base_t).requires_grad_()
    # SAGE's x.new_zeros(...).index_reduce_(0, i, x_j, 'mean', include_self=False)
    out_t = src_t.new_zeros(4, 3).index_reduce_(0, index, src_t * 2, reduce, include_self=include_self)
    out_k = src_k.new_zeros(4, 3).index_reduce_(0, k(index), src_k * 2, reduce, include_self=include_self)
    close(out_k, out_t)
    w = torch.randn(4, 3)
    (out_t * w).sum().backward()
    (out_k * k(w)).sum().backward()
    close(src_k.grad, src_t.grad)
    # a non-leaf self that requires grad: the gradient reaches the base through self
    out_t = (base_t * 1).index_reduce_(0, index, src_t, reduce, include_self=include_self)
    out_k = (base_k * 1).index_reduce_(0, k(index), src_k, reduce, include_self=include_self)
    close(out_k, out_t)
    (out_t * w).sum().backward()
    (out_k * k(w)).sum().backward()
    close(base_k.grad, base_t.grad)
    close(src_k.grad, src_t.grad)


# ---- d2l_rnn_scratch: Tensor.detach_() between truncated-BPTT batches -------------------------------------
def test_detach_inplace():
    for lib in (torch, kiln):
        a = lib.ones(3, requires_grad=True)
        b = a * 2
        assert b.detach_() is b  # the tensor itself
        assert not b.requires_grad and b.grad_fn is None and b.is_leaf
        assert lib.detach_(b) is b
        (a * 3).sum().backward()  # the rest of the graph is untouched
        assert a.grad.tolist() == [3.0, 3.0, 3.0]
        a.detach_()  # a leaf that requires grad: no longer does, keeps its .grad
        assert not a.requires_grad and a.grad is not None
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            lib.randn(3)[0:2].detach_()
        # the states of nn.RNN / nn.LSTM are not views: detached in place between batches
        lstm = lib.nn.LSTM(3, 4)
        _, (h, c) = lstm(lib.randn(2, 1, 3))
        for s in (h, c):
            s.detach_()
            assert not s.requires_grad
