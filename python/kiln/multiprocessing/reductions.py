"""How multiprocessing pickles kiln tensors: a tensor in shared memory goes as its memfd (DupFd, the
way torch's file_descriptor strategy sends storages) with its dtype, shape, strides and offset, so
the other process maps the same memory; any other tensor goes by value (its usual pickle)."""
import pickle
from multiprocessing.reduction import DupFd, ForkingPickler

from .. import _shared_memory


def rebuild_shared(dup_fd, nbytes, dtype, size, stride, offset, requires_grad, param):
    from ..nn.parameter import Parameter
    t = _shared_memory.tensor_over(dup_fd.detach(), nbytes, dtype, size, stride, offset)
    if param:
        return Parameter(t, requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t


def reduce_tensor(t):
    h = _shared_memory.handle(t)
    if h is None:
        return t.__reduce_ex__(pickle.DEFAULT_PROTOCOL)  # by value (Tensor's own pickling ignores the protocol)
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
                           "not support crossing process boundaries.  If you just want to transfer the data, call "
                           "detach() on the tensor before serializing (e.g., putting it on the queue).")
    fd, nbytes, byte_offset = h
    from ..nn.parameter import Parameter
    offset = byte_offset // t.element_size() + t.storage_offset()
    return rebuild_shared, (DupFd(fd), nbytes, t.dtype, tuple(t.shape), tuple(t.stride()), offset, t.requires_grad,
                            isinstance(t, Parameter))


def init_reductions():
    from .._tensor import Tensor
    from ..nn.parameter import Parameter
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
