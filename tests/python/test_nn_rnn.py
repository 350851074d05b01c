"""kiln.nn's recurrent layers and cells and kiln.nn.utils.rnn against torch's: modules built with the
same arguments, torch's state_dict loaded into kiln's, then the forward results and the gradients of
every parameter, input and initial state compared (float64 unless said otherwise)."""
import numpy as np
import pytest

import kiln

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn
krnn = kiln.nn.utils.rnn


def k(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def paired(name, *args, **kwargs):
    """torch's module and kiln's with torch's weights (float64)."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kwargs).double()
    km = getattr(kiln.nn, name)(*args, **kwargs).double()
    km.load_state_dict({n: k(v) for n, v in tm.state_dict().items()})
    return tm, km


def flat(out):
    """The tensors of an RNN result ((output, h) or (output, (h, c)), or a cell's)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    if isinstance(out, (trnn.PackedSequence, krnn.PackedSequence)):
        return [out.data]
    return [out]


def compare(tm, km, t_inputs, atol=1e-10):
    """Runs both, compares every output, then the gradients of sum(output_i * weight_i)."""
    def leaves(x, make):  # tensors, and tuples of them ((h, c)), as fresh leaves that require grad
        return tuple(leaves(t, make) for t in x) if isinstance(x, tuple) else make(x).requires_grad_()

    k_inputs = [leaves(t, k) for t in t_inputs]
    t_inputs = [leaves(t, torch.Tensor.clone) for t in t_inputs]
    t_out, k_out = flat(tm(*t_inputs)), flat(km(*k_inputs))
    assert len(t_out) == len(k_out)
    for a, b in zip(t_out, k_out):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), atol=atol, rtol=1e-8)
    rng = np.random.default_rng(1)
    ws = [rng.standard_normal(tuple(a.shape)) for a in t_out]
    sum((a * torch.from_numpy(w)).sum() for a, w in zip(t_out, ws)).backward()
    sum((b * kiln.from_numpy(w)).sum() for b, w in zip(k_out, ws)).backward()
    for (name, tp), kp in zip(tm.named_parameters(), km.parameters()):
        np.testing.assert_allclose(kp.grad.numpy(), tp.grad.numpy(), atol=atol, rtol=1e-8, err_msg=name)
    for a, b in zip(flat(t_inputs), flat(k_inputs)):  # inputs and initial states
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=atol, rtol=1e-8)


def states(mode, layers_dirs, batch, hidden, proj=0):
    h = torch.randn(layers_dirs, batch, proj or hidden, dtype=torch.float64)
    if mode == "LSTM":
        return (h, torch.randn(layers_dirs, batch, hidden, dtype=torch.float64))
    return h


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("layers,bidirectional,batch_first", [(1, False, False), (2, True, False), (3, False, True)])
def test_layers_match_torch(mode, layers, bidirectional, batch_first):
    tm, km = paired(mode, 5, 4, layers, bidirectional=bidirectional, batch_first=batch_first)
    x = torch.randn(3, 6, 5, dtype=torch.float64)
    compare(tm, km, [x])
    tm.zero_grad()
    km.zero_grad()
    compare(tm, km, [x, states(mode, layers * (2 if bidirectional else 1), 3 if batch_first else 6, 4)])


def test_lstm_projections_and_relu_rnn():
    tm, km = paired("LSTM", 5, 6, 2, proj_size=3, bidirectional=True)
    compare(tm, km, [torch.randn(4, 2, 5, dtype=torch.float64), states("LSTM", 4, 2, 6, proj=3)])
    tm, km = paired("RNN", 5, 4, 2, nonlinearity="relu", bias=False)
    compare(tm, km, [torch.randn(4, 2, 5, dtype=torch.float64)])


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_unbatched_input(mode):
    tm, km = paired(mode, 5, 4, 2)
    compare(tm, km, [torch.randn(7, 5, dtype=torch.float64)])
    h = states(mode, 2, 1, 4)
    h = tuple(t[:, 0] for t in h) if mode == "LSTM" else h[:, 0]
    compare(tm, km, [torch.randn(7, 5, dtype=torch.float64), h])


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences(mode, enforce_sorted):
    tm, km = paired(mode, 3, 4, 2, bidirectional=True)
    lengths = [5, 4, 2, 2] if enforce_sorted else [2, 5, 1, 4]
    x = torch.randn(5, 4, 3, dtype=torch.float64)
    tp = trnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    kx = k(x).requires_grad_()
    kp = krnn.pack_padded_sequence(kx, lengths, enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(kp.data.detach().numpy(), tp.data.numpy())
    np.testing.assert_array_equal(kp.batch_sizes.numpy(), tp.batch_sizes.numpy())
    t_out, t_h = tm(tp)
    k_out, k_h = km(kp)
    t_pad, t_len = trnn.pad_packed_sequence(t_out, total_length=6)
    k_pad, k_len = krnn.pad_packed_sequence(k_out, total_length=6)
    np.testing.assert_array_equal(k_len.numpy(), t_len.numpy())
    for a, b in zip([t_pad] + flat(t_h), [k_pad] + flat(k_h)):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), atol=1e-10)
    # Gradients through packing, the layer and unpacking, to the padded input.
    xt = x.clone().requires_grad_()
    out, _ = tm(trnn.pack_padded_sequence(xt, lengths, enforce_sorted=enforce_sorted))
    (trnn.pad_packed_sequence(out)[0] ** 2).sum().backward()
    (krnn.pad_packed_sequence(k_out)[0] ** 2).sum().backward()
    np.testing.assert_allclose(kx.grad.numpy(), xt.grad.numpy(), atol=1e-10)


def test_sequence_utilities():
    seqs = [torch.randn(n, 2, dtype=torch.float64) for n in (3, 5, 1)]
    kseqs = [k(s) for s in seqs]
    for batch_first in (False, True):
        np.testing.assert_array_equal(krnn.pad_sequence(kseqs, batch_first=batch_first, padding_value=-1).numpy(),
                                      trnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-1).numpy())
    tp, kp = trnn.pack_sequence(seqs, enforce_sorted=False), krnn.pack_sequence(kseqs, enforce_sorted=False)
    np.testing.assert_array_equal(kp.data.numpy(), tp.data.numpy())
    np.testing.assert_array_equal(kp.sorted_indices.numpy(), tp.sorted_indices.numpy())
    np.testing.assert_array_equal(kp.unsorted_indices.numpy(), tp.unsorted_indices.numpy())
    for a, b in zip(trnn.unpack_sequence(tp), krnn.unpack_sequence(kp)):
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        krnn.pack_sequence(kseqs)
    with pytest.raises(ValueError, match="total_length"):
        krnn.pad_packed_sequence(kp, total_length=2)


@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_torch(cell):
    tm, km = paired(cell, 5, 4)
    x = torch.randn(3, 5, dtype=torch.float64)
    h = torch.randn(3, 4, dtype=torch.float64)
    compare(tm, km, [x])
    tm.zero_grad()
    km.zero_grad()
    compare(tm, km, [x, (h, torch.randn(3, 4, dtype=torch.float64)) if cell == "LSTMCell" else h])
    tm.zero_grad()
    km.zero_grad()
    compare(tm, km, [torch.randn(5, dtype=torch.float64)])  # unbatched


def test_a_cell_unrolled_matches_the_layer():
    # LSTMCell stepped in Python and LSTM over the sequence: the same weights give the same states.
    torch.manual_seed(3)
    layer = kiln.nn.LSTM(3, 4).double()
    cell = kiln.nn.LSTMCell(3, 4).double()
    cell.load_state_dict({name[:-3]: v for name, v in layer.state_dict().items()})
    x = kiln.from_numpy(np.random.default_rng(2).standard_normal((6, 2, 3)))
    out, (h, c) = layer(x)
    hc = None
    for t in range(6):
        hc = cell(x[t], hc)
        np.testing.assert_allclose(hc[0].detach().numpy(), out[t].detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(hc[1].detach().numpy(), c[0].detach().numpy(), atol=1e-12)


def test_parameters_state_dict_and_initialisation_are_torchs():
    torch.manual_seed(0)
    tm = torch.nn.LSTM(5, 6, 2, proj_size=3, bidirectional=True)
    km = kiln.nn.LSTM(5, 6, 2, proj_size=3, bidirectional=True)
    assert list(km.state_dict()) == list(tm.state_dict())
    assert [tuple(p.shape) for p in km.parameters()] == [tuple(p.shape) for p in tm.parameters()]
    assert repr(km) == repr(tm)
    for p in km.parameters():  # U(-1/sqrt(hidden), 1/sqrt(hidden))
        assert float(p.abs().max()) <= 1 / np.sqrt(6)
    assert len(km.all_weights) == 4 and len(km._flat_weights) == 20
    gru = kiln.nn.GRU(4, 8, bias=False)
    assert list(gru.state_dict()) == ["weight_ih_l0", "weight_hh_l0"]


def test_float32_training_step_matches_torch():
    tm, km = paired("LSTM", 8, 16, 2)
    tm.float()
    km.float()
    km.load_state_dict({n: k(v) for n, v in tm.state_dict().items()})
    x = torch.randn(10, 4, 8)
    compare(tm, km, [x], atol=2e-5)


def test_dropout_between_layers_only_in_training():
    km = kiln.nn.LSTM(4, 4, 3, dropout=0.5).double()
    x = kiln.from_numpy(np.random.default_rng(0).standard_normal((5, 2, 4)))
    km.eval()
    a, b = km(x)[0], km(x)[0]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    km.train()
    c, d = km(x)[0], km(x)[0]
    assert not np.array_equal(c.detach().numpy(), d.detach().numpy())


def test_bad_arguments_raise_torchs_errors():
    with pytest.raises(ValueError, match="dropout should be a number"):
        kiln.nn.LSTM(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        kiln.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        kiln.nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        kiln.nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        kiln.nn.LSTM(3, 0)
    with pytest.warns(UserWarning, match="non-zero dropout"):
        kiln.nn.GRU(3, 4, dropout=0.2)
    m = kiln.nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. Expected 3, got 5"):
        m(kiln.zeros(2, 1, 5))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 1, 4\), got \[1, 2, 4\]"):
        m(kiln.zeros(2, 1, 3), (kiln.zeros(1, 2, 4), kiln.zeros(1, 1, 4)))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D"):
        m(kiln.zeros(2, 1, 1, 3))
    with pytest.raises(ValueError, match="input must have the type"):
        m(kiln.zeros(2, 1, 3, dtype=kiln.float64))
    with pytest.raises(RuntimeError, match="sequence length"):
        m(kiln.zeros(0, 1, 3))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size|weight_ih"):
        kiln.nn.GRUCell(3, 4)(kiln.zeros(2, 5))


def test_second_derivative_has_a_graph():
    # The fused layer's backward kernel has no derivative; with create_graph the gradient comes from
    # the layer written as ops (test_double_backward_fused.py compares the values with torch).
    m = kiln.nn.LSTM(2, 2).double()
    x = kiln.from_numpy(np.ones((2, 1, 2))).requires_grad_()
    (g,) = kiln.autograd.grad(m(x)[0].sum(), [x], create_graph=True)
    assert g.grad_fn is not None
