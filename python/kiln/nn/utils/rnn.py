"""Packed and padded sequences for the recurrent layers, as torch.nn.utils.rnn.

A PackedSequence holds the steps of a batch of sequences of different lengths one after the other:
step t's rows are the batch_sizes[t] sequences still running (sorted longest first), so the layers'
C++ time loop shrinks its batch instead of computing padding. Packing and unpacking are one
index_select each, so gradients flow through them."""
from collections import namedtuple

import kiln

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def invert_permutation(permutation):
    if permutation is None:
        return None
    return kiln.argsort(permutation)


class PackedSequence(_PackedSequenceBase):
    """(data, batch_sizes, sorted_indices, unsorted_indices); build it with pack_padded_sequence or
    pack_sequence, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence(*pack_result): torch allows a (data, batch_sizes) pair
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    def cpu(self):
        return self

    def double(self):
        return self.to(dtype=kiln.float64)

    def float(self):
        return self.to(dtype=kiln.float32)

    def half(self):
        return self.to(dtype=kiln.float16)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _lengths_list(lengths):
    if isinstance(lengths, kiln.Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D tensor, got {lengths.dim()}D")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _batch_sizes(lengths):
    """batch_sizes[t] = how many of the (sorted, decreasing) lengths exceed t."""
    return [sum(1 for n in lengths if n > t) for t in range(lengths[0])] if lengths else []


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of the given lengths."""
    lengths = _lengths_list(lengths)
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        # torch.sort(lengths, descending=True): its (unstable) order of equal lengths decides the row
        # order of the packed data, and so which dropout draws each sequence gets in a multi-layer RNN
        sorted_lengths, sorted_indices = kiln.sort(kiln.tensor(lengths, dtype=kiln.int64), descending=True)
        lengths = sorted_lengths.tolist()
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.size(0), input.size(1)
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={batch})")
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lengths and lengths[0] > steps:
        raise RuntimeError(f"Expected the longest length to be at most the padded length {steps}, "
                           f"got {lengths[0]}")
    batch_sizes = _batch_sizes(lengths)
    rows = [t * batch + b for t, size in enumerate(batch_sizes) for b in range(size)]
    flat = input.reshape(steps * batch, *input.shape[2:])
    data = flat.index_select(0, kiln.tensor(rows, dtype=kiln.int64))
    return PackedSequence(data, kiln.tensor(batch_sizes, dtype=kiln.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded (T, B, *) or (B, T, *), lengths as int64)."""
    data, batch_sizes = sequence.data, [int(v) for v in sequence.batch_sizes.tolist()]
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    batch = batch_sizes[0] if batch_sizes else 0
    # Each padded position reads its packed row, padding reads one extra row of padding_value.
    pad_row = data.size(0)
    source = [pad_row] * (max_seq_length * batch)
    row = 0
    for t, size in enumerate(batch_sizes):
        for b in range(size):
            source[t * batch + b] = row
            row += 1
    filler = kiln.full([1, *data.shape[1:]], padding_value, dtype=data.dtype)
    padded = kiln.cat([data, filler]).index_select(0, kiln.tensor(source, dtype=kiln.int64))
    padded = padded.reshape(max_seq_length, batch, *data.shape[1:])
    lengths = [sum(1 for size in batch_sizes if size > b) for b in range(batch)]
    lengths = kiln.tensor(lengths, dtype=kiln.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), padded with padding_value."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, kiln.Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        missing = max_len - s.size(0)
        if missing:
            filler = kiln.full([missing, *s.shape[1:]], padding_value, dtype=s.dtype)
            s = kiln.cat([s, filler] if padding_side == "right" else [filler, s])
        padded.append(s)
    return kiln.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences pad_sequence stacked, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:length] for seq, length in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """pack_padded_sequence of pad_sequence(sequences)."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences pack_sequence packed."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
