"""Tensors in shared memory (Tensor.share_memory_, Module.share_memory): the elements move into a
memfd mapped MAP_SHARED, so a forked child writes the parent's memory, and kiln.multiprocessing
hands the file descriptor (not the values) to a spawned child or through a Queue, as torch's
file_descriptor sharing strategy does. Hogwild training (pytorch/examples mnist_hogwild) relies on it.

Unlike torch, which moves the tensor's whole storage, the tensor is given a new contiguous storage
holding its elements (`self.data = shared`): other views of the old storage do not follow it."""
import mmap
import os
import weakref

import numpy as np

from . import _C

# start address of a shared buffer -> (fd, nbytes); the entry goes when the buffer's last user does
_buffers = {}


def _register(arr, fd, nbytes):
    start = arr.ctypes.data
    _buffers[start] = (fd, nbytes)

    def forget():
        _buffers.pop(start, None)
        os.close(fd)
    weakref.finalize(arr, forget)


def tensor_over(fd, nbytes, dtype, size, stride, offset):
    """A tensor over the mapped file: its memory is the buffer's, which stays mapped while the tensor lives."""
    mm = mmap.mmap(fd, max(nbytes, 1))
    arr = np.frombuffer(mm, dtype=np.uint8, count=max(nbytes, 1))
    _register(arr, fd, nbytes)
    flat = _C.from_numpy(arr)
    return flat.view(dtype).as_strided(size, stride, offset) if nbytes else flat[:0].view(dtype).view(size)


def share(t):
    """Moves t's elements into a new shared buffer (t itself keeps its identity: t.data is replaced)."""
    if is_shared(t):
        return t
    nbytes = t.numel() * t.element_size()
    fd = os.memfd_create("kiln-shared-tensor", os.MFD_CLOEXEC)
    os.ftruncate(fd, max(nbytes, 1))
    shared = tensor_over(fd, nbytes, t.dtype, tuple(t.shape), _contiguous_strides(t.shape), 0)
    shared.copy_(t.detach())
    t.data = shared
    return t


def handle(t):
    """(fd, nbytes, byte offset of t's storage start) of a shared tensor, None for any other."""
    if not _buffers:
        return None
    base = t.data_ptr() - t.storage_offset() * t.element_size()
    for start, (fd, nbytes) in _buffers.items():
        if start <= base < start + max(nbytes, 1):
            return fd, nbytes, base - start
    return None


def is_shared(t):
    return handle(t) is not None


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
