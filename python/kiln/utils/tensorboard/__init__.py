"""kiln.utils.tensorboard: torch.utils.tensorboard's SummaryWriter for scalars and text.

As in torch, the event files are written by the `tensorboard` package, which is not a dependency:
without it this import raises the same ModuleNotFoundError ("No module named 'tensorboard'") that
`from torch.utils.tensorboard import SummaryWriter` raises, so scripts that guard it behave alike.
"""
import tensorboard

# torch 1.13 refuses tensorboard < 1.15 with this ImportError.
_version = tuple(int(p) for p in tensorboard.__version__.split(".")[:2] if p.isdigit()) \
    if hasattr(tensorboard, "__version__") else ()
if _version < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")
del tensorboard, _version

from .writer import FileWriter, SummaryWriter  # noqa: E402,F401
from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402,F401
