"""kiln.distributed: torch.distributed's entry points, without a backend yet.

kiln has no gloo/nccl/mpi, so is_available() is False (torch's CPU build answers True: it has
gloo) and a process group can never be started: init_process_group raises RuntimeError naming
what is missing. Everything else answers as torch does before init_process_group: is_initialized()
is False, and get_rank(), get_world_size(), barrier(), all_reduce(), ... raise torch's RuntimeError,
so single-process scripts that guard with `dist.is_initialized()` run unchanged.
"""
import enum
import os

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."
_NO_BACKEND = "kiln has no distributed backend (gloo/nccl/mpi) yet"


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class ReduceOp:
    """The reductions of all_reduce/reduce (ReduceOp.SUM == ReduceOp.RedOpType.SUM, as in torch)."""
    RedOpType = RedOpType
    SUM, AVG, PRODUCT, MIN, MAX = RedOpType.SUM, RedOpType.AVG, RedOpType.PRODUCT, RedOpType.MIN, RedOpType.MAX
    BAND, BOR, BXOR, PREMUL_SUM = RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR, RedOpType.PREMUL_SUM


class Backend(str):
    """A backend name: Backend('GLOO') == 'gloo'; an unknown name raises ValueError, as in torch."""
    UNDEFINED, GLOO, NCCL, UCC, MPI = "undefined", "gloo", "nccl", "ucc", "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, value)


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = object()


class group:
    WORLD = None


def is_available():
    """False: kiln has no communication backend yet."""
    return False


def is_initialized():
    return False


def is_gloo_available():
    return False


def is_nccl_available():
    return False


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_torchelastic_launched():
    """Whether torchrun started this process (it sets TORCHELASTIC_RUN_ID)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None):
    """Would join the processes of a job; raises RuntimeError (ValueError for a backend name torch rejects)."""
    if backend is not None:
        backend = Backend(backend)
    raise RuntimeError(f"{_NO_BACKEND}: init_process_group(backend={backend!r}) cannot start a process group; "
                       "run in a single process")


def destroy_process_group(group=None):
    raise AssertionError(f"no process group to destroy: {_NOT_INITIALIZED}")


def _uninitialized(name):
    def fn(*args, **kwargs):
        raise RuntimeError(_NOT_INITIALIZED)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.distributed.{name}: raises RuntimeError, as torch does before init_process_group."
    return fn


get_rank = _uninitialized("get_rank")
get_world_size = _uninitialized("get_world_size")
get_backend = _uninitialized("get_backend")
new_group = _uninitialized("new_group")
barrier = _uninitialized("barrier")
monitored_barrier = _uninitialized("monitored_barrier")
broadcast = _uninitialized("broadcast")
broadcast_object_list = _uninitialized("broadcast_object_list")
all_reduce = _uninitialized("all_reduce")
reduce = _uninitialized("reduce")
all_gather = _uninitialized("all_gather")
all_gather_object = _uninitialized("all_gather_object")
all_gather_into_tensor = _uninitialized("all_gather_into_tensor")
gather = _uninitialized("gather")
gather_object = _uninitialized("gather_object")
scatter = _uninitialized("scatter")
scatter_object_list = _uninitialized("scatter_object_list")
reduce_scatter = _uninitialized("reduce_scatter")
reduce_scatter_tensor = _uninitialized("reduce_scatter_tensor")
all_to_all = _uninitialized("all_to_all")
all_to_all_single = _uninitialized("all_to_all_single")
send = _uninitialized("send")
recv = _uninitialized("recv")
isend = _uninitialized("isend")
irecv = _uninitialized("irecv")
