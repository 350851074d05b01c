"""kiln.utils.tensorboard against torch.utils.tensorboard (karpathy/makemore imports its SummaryWriter).

Without the tensorboard package both imports fail alike; with it, the same calls write the same
events (compared without wall times) into the same run directories."""
import importlib
import os
import sys

import pytest

import kiln

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
try:
    import tensorboard  # noqa: F401
    HAVE_TB = True
except ImportError:
    HAVE_TB = False
needs_tb = pytest.mark.skipif(not HAVE_TB, reason="tensorboard is not installed")


def import_without_tensorboard(monkeypatch, name):
    """The exception `import name` raises when the tensorboard package cannot be imported."""
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # as if not installed
    monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(ImportError) as info:
        importlib.import_module(name)
    return info.value


def test_missing_tensorboard_raises_module_not_found(monkeypatch):
    e = import_without_tensorboard(monkeypatch, "kiln.utils.tensorboard")
    assert type(e) is ModuleNotFoundError and e.name == "tensorboard"


@needs_torch
def test_missing_tensorboard_matches_torch(monkeypatch):
    k = import_without_tensorboard(monkeypatch, "kiln.utils.tensorboard")
    t = import_without_tensorboard(monkeypatch, "torch.utils.tensorboard")
    assert (type(k), k.name) == (type(t), t.name)


def events(log_dir):
    """{run directory relative to log_dir: sorted [(step, summary, session_log, file_version)]}, no wall times."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    runs = {}
    for root, _, files in os.walk(log_dir):
        for f in sorted(files):
            if "tfevents" in f:
                runs.setdefault(os.path.relpath(root, log_dir), []).extend(
                    (e.step, str(e.summary), str(e.session_log), e.file_version)
                    for e in EventFileLoader(os.path.join(root, f)).Load())
    return {run: sorted(evs) for run, evs in runs.items()}  # file names order by time, not creation


def log_everything(lib, log_dir):
    from importlib import import_module
    SummaryWriter = import_module(lib.__name__ + ".utils.tensorboard").SummaryWriter
    w = SummaryWriter(log_dir=log_dir, purge_step=2)
    w.add_scalar("Loss/train", lib.tensor(1.5), 3)          # a 0-d tensor
    w.add_scalar("Loss/test", 2.25, global_step=4)          # a Python float
    w.add_scalar("lr", lib.tensor([0.5]), 5, new_style=True)
    w.add_scalar("lr64", 0.125, 6, new_style=True, double_precision=True)
    w.add_scalars("loss", {"train": lib.tensor(1.0), "val": 3.0}, 7)
    w.add_text("note", "hello", 8)
    w.flush()
    w.close()
    w.close()  # a second close does nothing
    with SummaryWriter(log_dir=log_dir) as w2:  # reopened: a new event file
        w2.add_scalar("Loss/train", 1.25, 9)
    return w.get_logdir()


@needs_tb
def test_summary_writer_events(tmp_path):
    assert log_everything(kiln, str(tmp_path)) == str(tmp_path)
    runs = events(str(tmp_path))
    assert sorted(runs) == [".", "loss_train", "loss_val"]
    steps = [e[0] for e in runs["."] if e[1]]
    assert steps == [3, 4, 5, 6, 8, 9]


@needs_tb
@needs_torch
def test_summary_writer_matches_torch(tmp_path):
    log_everything(kiln, str(tmp_path / "k"))
    log_everything(torch, str(tmp_path / "t"))
    assert events(str(tmp_path / "k")) == events(str(tmp_path / "t"))


@needs_tb
def test_default_log_dir_and_comment(tmp_path, monkeypatch):
    from kiln.utils.tensorboard import SummaryWriter
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    w.close()
    d = w.get_logdir()
    assert d.startswith("runs" + os.sep) and d.endswith("_exp") and os.path.isdir(d)


@needs_tb
def test_non_scalar_refused():
    from kiln.utils.tensorboard import SummaryWriter
    import tempfile
    with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        with pytest.raises(AssertionError):
            w.add_scalar("x", kiln.ones(2), 0)
