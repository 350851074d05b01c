"""Tensor.untyped_storage() and Tensor.storage(): torch's views of the memory a tensor lives in, for the
questions scripts ask of it (its size, its address, whether two tensors share it, its elements). A kiln
storage object holds a tensor over the whole storage; the memory itself stays kiln's."""
import warnings

__all__ = ["UntypedStorage", "TypedStorage"]


def _whole_storage(tensor):
    """A flat tensor of `tensor`'s dtype over every element of its storage."""
    n = tensor._storage_nbytes() // tensor.element_size()
    return tensor.detach().as_strided((n,), (1,), 0)


class UntypedStorage:
    """The storage's bytes (torch.UntypedStorage)."""

    def __init__(self, tensor):
        self._tensor = tensor

    @property
    def device(self):
        return self._tensor.device

    @property
    def dtype(self):
        from . import uint8
        return uint8

    def nbytes(self):
        return self._tensor._storage_nbytes()

    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        t = self._tensor
        return t.data_ptr() - t.storage_offset() * t.element_size()

    def _bytes(self):
        return _whole_storage(self._tensor).contiguous().numpy().view("uint8")

    def tolist(self):
        return self._bytes().tolist()

    def __getitem__(self, index):
        return int(self._bytes()[index])

    def is_shared(self):
        return self._tensor.is_shared()

    def cpu(self):
        return self

    @property
    def is_cuda(self):
        return False

    def __repr__(self):
        return f" {' '.join(str(b) for b in self.tolist()[:20])}{' ...' if len(self) > 20 else ''}\n" \
               f"[kiln.storage.UntypedStorage(device={self.device}) of size {len(self)}]"


class TypedStorage:
    """The storage as elements of the tensor's dtype (torch.TypedStorage, deprecated in torch 2.x with the
    same warning)."""

    def __init__(self, tensor):
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
                      "the only storage class. This should only matter to you if you are using storages directly.  "
                      "To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=3)
        self._tensor = tensor

    @property
    def device(self):
        return self._tensor.device

    @property
    def dtype(self):
        return self._tensor.dtype

    def size(self):
        return self._tensor._storage_nbytes() // self._tensor.element_size()

    def __len__(self):
        return self.size()

    def element_size(self):
        return self._tensor.element_size()

    def nbytes(self):
        return self._tensor._storage_nbytes()

    def data_ptr(self):
        return self.untyped().data_ptr()

    def untyped(self):
        return UntypedStorage(self._tensor)

    _untyped_storage = property(untyped)

    def tolist(self):
        return _whole_storage(self._tensor).tolist()

    def __getitem__(self, index):
        return _whole_storage(self._tensor)[index].item()

    def is_shared(self):
        return self._tensor.is_shared()

    @property
    def is_cuda(self):
        return False

    def __repr__(self):
        return f" {' '.join(str(v) for v in self.tolist()[:20])}{' ...' if len(self) > 20 else ''}\n" \
               f"[kiln.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {len(self)}]"
