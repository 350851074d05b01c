"""Recurrent layers (RNN, LSTM, GRU) and cells, as torch.nn's: the same constructor arguments,
parameter names (weight_ih_l0, bias_hh_l1_reverse, weight_hr_l0, ...), initialisation and checks,
so state_dicts interchange. The time loop runs in C++ (kiln.lstm / gru / rnn_tanh / rnn_relu and
the *_cell ops: runtime/kernels/composite/rnn_ops.cc)."""
import math
import numbers
import warnings

import kiln

from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_OPS = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """The shared constructor, weights and checks of RNN, LSTM and GRU (torch.nn.RNNBase)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        num_directions = 2 if bidirectional else 1
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        kw = {"dtype": dtype} if dtype is not None else {}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [(gate_size, layer_input_size), (gate_size, real_hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(kiln.empty(list(shape), **kw)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """torch packs the weights for cuDNN; kiln's CPU loop reads them as they are."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _real_hidden_size(self):
        return self.proj_size if self.proj_size > 0 else self.hidden_size

    def check_input(self, input, batch_sizes):
        weights = self._flat_weights
        if weights and input.dtype != weights[0].dtype:
            raise ValueError(f"input must have the type {weights[0].dtype}, got type {input.dtype}")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self._real_hidden_size())

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def _zeros(self, input, max_batch_size, size):
        num_directions = 2 if self.bidirectional else 1
        return kiln.zeros(self.num_layers * num_directions, max_batch_size, size, dtype=input.dtype)

    def _prepare(self, input, name):
        """The input as the op takes it (3-D, or packed data), whether it was batched, and its
        batch_sizes / sorted / unsorted indices when packed."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            return data, True, batch_sizes, sorted_indices, unsorted_indices, int(batch_sizes[0])
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        return input, is_batched, None, None, None, max_batch_size

    def _state(self, hx, is_batched, packed, name, label):
        """hx as the op takes it: unbatched 2-D states gain their batch dim, as the input did."""
        if packed or hx is None:
            return hx
        want = 3 if is_batched else 2
        if hx.dim() != want:
            kind = "batched 3-D" if is_batched else "unbatched 2-D"
            raise RuntimeError(f"For {kind} input, {label} should also be {want}-D but got {hx.dim()}-D tensor")
        return hx if is_batched else hx.unsqueeze(1)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _run(self, input, states):
        """Runs the op on prepared input and states; returns (output, hidden tuple)."""
        op = getattr(kiln, _OPS[self.mode])
        args = (self._flat_weights, self.bias, self.num_layers, self.dropout, self.training, self.bidirectional)
        if isinstance(input, PackedSequence):
            result = op(input.data, input.batch_sizes, states, *args)
        else:
            result = op(input, states, *args, self.batch_first)
        return result[0], tuple(result[1:])


class RNN(RNNBase):
    """Elman RNN: h_t = tanh (or relu)(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return _single_state_forward(self, input, hx, "RNN")


class GRU(RNNBase):
    """Gated recurrent unit: r, z gates and a new state n; h_t = (1 - z) * n + z * h_{t-1}."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return _single_state_forward(self, input, hx, "GRU")


def _single_state_forward(module, input, hx, name):
    packed = isinstance(input, PackedSequence)
    data, is_batched, batch_sizes, sorted_indices, unsorted_indices, max_batch = module._prepare(input, name)
    hx = module._state(hx, is_batched, packed, name, "hx")
    if hx is None:
        hx = module._zeros(data, max_batch, module._real_hidden_size())
    else:
        hx = module.permute_hidden(hx, sorted_indices)
    module.check_forward_args(data, hx, batch_sizes)
    output, (hidden,) = module._run(input if packed else data, hx)
    if packed:
        return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
            module.permute_hidden(hidden, unsorted_indices)
    if not is_batched:
        output = output.squeeze(0 if module.batch_first else 1)
        hidden = hidden.squeeze(1)
    return output, module.permute_hidden(hidden, unsorted_indices)


class LSTM(RNNBase):
    """Long short-term memory, optionally with projections (proj_size): h_t = W_hr (o * tanh(c_t))."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        expected = list(self.get_expected_hidden_size(input, batch_sizes))
        expected[2] = self.hidden_size
        return tuple(expected)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        data, is_batched, batch_sizes, sorted_indices, unsorted_indices, max_batch = self._prepare(input, "LSTM")
        if hx is None:
            hx = (self._zeros(data, max_batch, self._real_hidden_size()), self._zeros(data, max_batch, self.hidden_size))
        else:
            if not packed:
                want = 3 if is_batched else 2
                if hx[0].dim() != want or hx[1].dim() != want:
                    kind = "batched 3-D" if is_batched else "unbatched 2-D"
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                if not is_batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        output, hidden = self._run(input if packed else data, list(hx))
        if packed:
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, self.permute_hidden(hidden, unsorted_indices)


class RNNCellBase(Module):
    """weight_ih (chunks * hidden, input), weight_hh (chunks * hidden, hidden), bias_ih, bias_hh."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = {"dtype": dtype} if dtype is not None else {}
        self.weight_ih = Parameter(kiln.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(kiln.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(kiln.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(kiln.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batched(self, input, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        return input.dim() == 2, input if input.dim() == 2 else input.unsqueeze(0)

    @staticmethod
    def _check_tensor_state(hx, op):
        """GRUCell / RNNCell: hx a Tensor (or None), as torch's op signature (a tuple is a TypeError)."""
        if hx is not None and not isinstance(hx, kiln.Tensor):
            raise TypeError(f"{op}(): argument 'hx' (position 2) must be Tensor, not {type(hx).__name__}")

    def _state(self, hx, input, is_batched, name, label="hx"):
        if hx is None:
            return kiln.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        if hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {hx.dim()}D instead")
        return hx if is_batched else hx.unsqueeze(0)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        is_batched, input = self._batched(input, "RNNCell")
        self._check_tensor_state(hx, "rnn_relu_cell" if self.nonlinearity == "relu" else "rnn_tanh_cell")
        hx = self._state(hx, input, is_batched, "RNNCell")
        if self.nonlinearity == "tanh":
            ret = kiln.rnn_tanh_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        elif self.nonlinearity == "relu":
            ret = kiln.rnn_relu_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched, input = self._batched(input, "LSTMCell")
        if hx is None:
            zeros = self._state(None, input, is_batched, "LSTMCell")
            hx = (zeros, zeros)
        else:
            # torch's op signature: a tuple (or list) of two Tensors; a bare Tensor is a TypeError
            if not isinstance(hx, (tuple, list)):
                raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not "
                                f"{type(hx).__name__}")
            for i, h in enumerate(hx):
                if not isinstance(h, kiln.Tensor):
                    raise TypeError(f"expected Tensor as element {i} in argument 1, but got {type(h).__name__}")
            if len(hx) != 2:
                raise RuntimeError(f"lstm_cell expects two hidden states, got {len(hx)}")
            hx = tuple(self._state(h, input, is_batched, "LSTMCell", f"hx[{i}]") for i, h in enumerate(hx))
        h, c = kiln.lstm_cell(input, list(hx), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched, input = self._batched(input, "GRUCell")
        self._check_tensor_state(hx, "gru_cell")
        hx = self._state(hx, input, is_batched, "GRUCell")
        ret = kiln.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
