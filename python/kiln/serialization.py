"""Saving and loading tensors: torch's checkpoint format (kiln.save / kiln.load) and safetensors.

``save`` / ``load`` work like ``torch.save`` / ``torch.load`` and use their file format, so
torch reads kiln's checkpoints and kiln reads torch's (the format lives in _torch_pickle.py).
``load`` is weights-only by default, as in torch >= 2.6: it rebuilds tensors, containers and
plain values, plus the classes allowlisted with ``add_safe_globals``, and never imports or
calls anything else a file names.

``save_file`` / ``load_file`` work like ``safetensors.torch``: a flat dict of name -> tensor,
plus optional str -> str metadata, in the safetensors format (checked in C++,
runtime/serialization/). ``load`` also reads safetensors files, including those older kiln
versions wrote with ``save`` (the nesting kept in the metadata entry ``kiln.structure``).
"""
import contextlib
import hashlib
import io
import json
import os
import pickle
from collections import OrderedDict

from . import _C
from . import _legacy_format, _torch_pickle
from ._device import device as _device

__all__ = ["save_file", "load_file", "save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

STRUCTURE_KEY = "kiln.structure"
_STRUCTURE_VERSION = 1
# Deeper nesting in a kiln.structure entry is refused (the structure is rebuilt recursively).
_MAX_DEPTH = 200
_CONTAINERS = {dict: "dict", OrderedDict: "ordered_dict", list: "list", tuple: "tuple"}
_PLAIN = (bool, int, float, str)  # kept in the JSON structure description
_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"


def save_file(tensors, filename, metadata=None):
    """Saves a dict of name -> tensor to `filename` (str or os.PathLike) in safetensors format.

    The bytes are those ``safetensors.torch.save_file`` writes. Non-contiguous tensors are
    written as contiguous bytes; tensors that share memory are written as separate copies.
    """
    _C._save_safetensors(_named_tensors(tensors, "save_file"), _check_metadata(metadata), filename, "save_file")


def load_file(filename, device="cpu"):
    """Loads a safetensors file into a dict of name -> tensor (sorted by name).

    A missing file raises FileNotFoundError; a damaged one RuntimeError naming the problem.
    """
    _check_device(device, "load_file")
    pairs, _ = _C._load_safetensors_file(filename, "load_file")
    return dict(pairs)


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves `obj` to a path or a binary file object in torch.save's format: torch.load reads it.

    Tensors become torch's storage records (views of one tensor share one record, as in
    torch); nn.Parameter and requires_grad are kept; dtypes, devices and kiln.Size are written
    under torch's names. Any other object is pickled by name (its class's ``__module__``), so
    a whole nn.Module round-trips through ``load(f)`` in this process (load trusts the pickles
    this process wrote), or ``load(f, weights_only=False)`` in another.
    """
    if pickle_module is not pickle:
        raise TypeError("save(): kiln writes with its own pickler; pickle_module must be the pickle module")
    if not _use_new_zipfile_serialization:  # torch's legacy stream (_legacy_format.py)
        data_pkl, storages = _torch_pickle.pickle_checkpoint(obj, pickle_protocol, legacy=True)
        _pickles_written.add(hashlib.sha256(data_pkl).digest())
        if _is_path(f):
            with open(os.fsdecode(os.fspath(f)), "wb") as out:
                _legacy_format.write_legacy(out, data_pkl, storages, pickle_protocol)
        elif hasattr(f, "write"):
            _legacy_format.write_legacy(f, data_pkl, storages, pickle_protocol)
        else:
            raise _not_a_file(f, "write", "save")
        return
    data_pkl, storages = _torch_pickle.pickle_checkpoint(obj, pickle_protocol)  # before f is touched
    _pickles_written.add(hashlib.sha256(data_pkl).digest())
    if _is_path(f):
        path = os.fsdecode(os.fspath(f))
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):  # torch's zip writer checks it: RuntimeError
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        archive = os.path.splitext(os.path.basename(path))[0] or "archive"  # torch names it after the file
        with open(path, "wb") as out:
            _torch_pickle.write_checkpoint(out, archive, data_pkl, storages, not _disable_byteorder_record)
    elif hasattr(f, "write"):
        _torch_pickle.write_checkpoint(f, "archive", data_pkl, storages, not _disable_byteorder_record)
    else:
        raise _not_a_file(f, "write", "save")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads a checkpoint written by torch.save or kiln.save, or a safetensors file, from a path
    or a binary file object (the format is told by the file's first bytes).

    weights_only=True rebuilds only tensors, dicts / lists / tuples / sets, plain values, dtypes,
    devices, torch.Size and the globals allowed with ``add_safe_globals``; any other global
    raises pickle.UnpicklingError and nothing from the file runs. weights_only=False unpickles
    anything (only for trusted files), with torch's class names mapped to kiln's
    (``torch.nn.modules.linear.Linear`` -> ``kiln.nn.modules.linear.Linear``).
    weights_only=None (the default) is True, as in torch >= 2.6, except for a pickle this
    process wrote itself with kiln.save (the same bytes: their SHA-256 is kept in memory): it
    names only what this process pickled, so ``kiln.save(model, f)`` then ``kiln.load(f)``
    returns the model, as torch 1.13 does, while any other file's objects stay refused.

    map_location: None, "cpu", a kiln.device, a dict {saved location: new location} or a
    callable(storage, location) returning a tensor or None, as in torch.load. kiln has only the
    CPU, so a storage saved on another device must be mapped to "cpu" (RuntimeError otherwise).
    `mmap` is accepted and ignored: the file is read into memory.
    """
    if pickle_module is not None and pickle_module is not pickle:
        if weights_only or weights_only is None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
        raise TypeError("load(): kiln reads with its own unpickler; pickle_module must be the pickle module")
    restore = _restorer(map_location)
    pickle_load_args.setdefault("encoding", "utf-8")  # as torch.load: Python 2 str pickles
    if _is_path(f):
        name = os.fsdecode(os.fspath(f))
        with open(name, "rb") as fh:
            head = fh.read(9)
            if head[:4] in (_ZIP_MAGIC, _EMPTY_ZIP_MAGIC):
                fh.seek(0)
                return _load_zip(fh, f"load: {name}", restore, weights_only, pickle_load_args)
            if _legacy_format.is_legacy(head):
                fh.seek(0)
                return _load_legacy(fh, f"load: {name}", restore, weights_only, pickle_load_args)
        with _as_torch_load_error(head):
            pairs, metadata = _C._load_safetensors_file(f, "load")  # reports what is wrong with the file
    elif hasattr(f, "read"):
        name = str(getattr(f, "name", "<file object>"))
        seekable = getattr(f, "seekable", lambda: False)()
        start = f.tell() if seekable else 0
        head = f.read(9)
        if head[:4] in (_ZIP_MAGIC, _EMPTY_ZIP_MAGIC):
            if seekable:
                f.seek(start)
            else:
                f = io.BytesIO(head + f.read())
            return _load_zip(f, f"load: {name}", restore, weights_only, pickle_load_args)
        if _legacy_format.is_legacy(head):
            return _load_legacy(io.BytesIO(head + f.read()), f"load: {name}", restore, weights_only,
                                pickle_load_args)
        with _as_torch_load_error(head):
            pairs, metadata = _C._load_safetensors_bytes(head + f.read(), name, "load")
    else:
        raise _not_a_file(f, "seek", "load")
    tensors = {k: restore(v, "cpu") for k, v in pairs}  # kiln writes safetensors from the CPU
    if STRUCTURE_KEY not in metadata:
        return tensors
    return _Rebuilder(tensors, f"load: {name}").rebuild(metadata[STRUCTURE_KEY])


@contextlib.contextmanager
def _as_torch_load_error(head):
    """A file that is neither a zip checkpoint nor a safetensors file (whose JSON header starts at
    byte 8) is, to torch.load, a legacy pickle stream: an empty one raises EOFError ("Ran out of
    input") and other bytes pickle.UnpicklingError, which programs catch to skip a truncated
    checkpoint. kiln keeps its own diagnosis as the message."""
    try:
        yield
    except RuntimeError as e:
        if not head:
            raise EOFError(f"Ran out of input ({e})") from None
        if head[8:9] != b"{":
            raise pickle.UnpicklingError(str(e)) from None
        raise


_WEIGHTS_ONLY_HELP = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps only "
    "if you trust the source of the checkpoint. \n\t(1) Re-running `kiln.load` with `weights_only` set to `False` "
    "will likely succeed, but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check the recommended steps in "
    "the following error message.\n\tWeightsUnpickler error: ")


def _load_legacy(fh, where, restore, weights_only, pickle_load_args):
    return _legacy_format.load_legacy(fh, where, restore, weights_only, _pickles_written, _user_globals(),
                                      pickle_load_args, _WEIGHTS_ONLY_HELP)


def _load_zip(fh, where, restore, weights_only, pickle_load_args):
    with _torch_pickle.open_archive(fh, where) as (zf, archive_size):
        prefix = _torch_pickle.find_archive(zf, where)
        byteorder = _torch_pickle.read_byteorder(zf, prefix, where)
        data = _torch_pickle.read_record(zf, prefix + "data.pkl", where)
        if weights_only is None:
            weights_only = hashlib.sha256(data).digest() not in _pickles_written
        data_pkl = io.BytesIO(data)
        reader = _torch_pickle.Reader(zf, prefix, byteorder, restore, where, archive_size)
        table = _torch_pickle.torch_globals()
        if not weights_only:
            return _torch_pickle.FullUnpickler(data_pkl, reader, table, **pickle_load_args).load()
        unpickler = _torch_pickle.WeightsOnlyUnpickler(data_pkl, reader, table, _user_globals(), **pickle_load_args)
        try:
            return unpickler.load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(_WEIGHTS_ONLY_HELP + str(e)) from None


# The SHA-256 of every data.pkl kiln.save wrote in this process: load's default unpickles those in full.
_pickles_written = set()


# ---- weights_only allowlist (torch.serialization.add_safe_globals and friends) ----

_safe_globals = []


def _check_safe_globals(items):
    if not isinstance(items, (list, tuple, set)):
        raise TypeError(f"expected a list of classes / functions, got {type(items).__name__}")
    for g in items:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                                 f"length: {len(g)}")
            if type(g[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(g[1])}")
        elif not callable(g) or not hasattr(g, "__module__") or not hasattr(g, "__qualname__"):
            raise TypeError(f"safe globals must be classes or functions (or (object, 'module.name') pairs), got "
                            f"{type(g).__name__}")
    return list(items)


def add_safe_globals(safe_globals):
    """Marks classes / functions (or (object, "full.path") pairs) as safe for weights_only loads,
    e.g. ``add_safe_globals([MyConfig])``. A kiln class also covers its torch name, so
    allowlisting kiln.nn.Linear lets a file naming torch.nn.modules.linear.Linear load."""
    for g in _check_safe_globals(safe_globals):
        if g not in _safe_globals:
            _safe_globals.append(g)


def get_safe_globals():
    """The globals allowlisted with add_safe_globals."""
    return list(_safe_globals)


def clear_safe_globals():
    """Forgets every global allowlisted with add_safe_globals."""
    _safe_globals.clear()


class safe_globals:
    """Context manager: the given globals are allowlisted inside the ``with`` block only."""

    def __init__(self, safe_globals):
        self.safe_globals = _check_safe_globals(safe_globals)

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        for g in self.safe_globals:
            if g in _safe_globals:
                _safe_globals.remove(g)


def _user_globals():
    """"module.qualname" -> object for the allowlist; kiln.X names also answer to torch.X."""
    names = {}
    for g in _safe_globals:
        if isinstance(g, tuple):
            g, full = g
        else:
            full = f"{g.__module__}.{g.__qualname__}"
        names[full] = g
        if full.startswith("kiln."):
            names.setdefault("torch." + full[len("kiln."):], g)
    return names


# ---- checks shared by the entry points ----

def _is_path(f):
    return isinstance(f, (str, os.PathLike))  # torch's _is_path: bytes are a buffer, not a file name


def _not_a_file(f, attr, op):
    """torch's error for an f that is neither a path nor a file object: its buffer path calls f.seek /
    f.write and the AttributeError says what torch.load/save take."""
    hint = ("You can only load from a file that is seekable. Please pre-load the data into a buffer "
            "like io.BytesIO and try to load from it instead." if op == "load" else
            "save(): f must be a path (str or os.PathLike) or a binary file object with write().")
    return AttributeError(f"'{type(f).__name__}' object has no attribute '{attr}'. {hint}")


def _named_tensors(tensors, fn):
    if not isinstance(tensors, dict):
        raise TypeError(f"{fn}(): expected a dict of str -> kiln.Tensor, got {type(tensors).__name__}")
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise TypeError(f"{fn}(): tensor names must be str, got {type(k).__name__} {k!r}")
        if not isinstance(v, _C.TensorBase):
            raise TypeError(f"{fn}(): key `{k}` is invalid, expected kiln.Tensor but received {type(v)}")
    return list(tensors.items())


def _check_metadata(metadata):
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise TypeError(f"save_file(): metadata must be a dict of str -> str, got {type(metadata).__name__}")
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"save_file(): metadata must be a dict of str -> str, got {k!r}: {type(v).__name__}")
    return metadata


def _restorer(map_location):
    """torch.load's map_location as a function (flat storage tensor, saved location) -> tensor.

    kiln has only the CPU: whatever the mapping, each storage must end up on "cpu".
    """
    if map_location is None:
        target = None
    elif isinstance(map_location, (str, _device)):
        target = str(map_location)
    elif isinstance(map_location, dict):
        mapping = {k: str(v) for k, v in map_location.items()}
    elif callable(map_location):
        pass
    else:
        raise TypeError(f"load(): map_location must be None, a str, a device, a dict or a callable, got "
                        f"{type(map_location).__name__}")

    def restore(flat, location):
        if callable(map_location) and not isinstance(map_location, (str, _device, dict)):
            result = map_location(flat, location)
            if result is not None:
                if not isinstance(result, _C.TensorBase) or result.dtype != flat.dtype or \
                        result.numel() != flat.numel():
                    raise TypeError(f"load(): map_location returned {type(result).__name__}; expected the storage "
                                    f"(a {flat.dtype} tensor of {flat.numel()} elements) or None")
                return result.reshape(-1)
            loc = location
        elif isinstance(map_location, dict):
            loc = mapping.get(location, location)
        else:
            loc = location if target is None else target
        _check_restore_location(loc)
        return flat

    return restore


def _check_restore_location(location):
    kind = location.split(":", 1)[0] if isinstance(location, str) else None
    if kind == "cpu":
        return
    if kind == "cuda":
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False "
                           "(kiln has no CUDA backend). If you are running on a CPU-only machine, please use "
                           "kiln.load with map_location=kiln.device('cpu') to map your storages to the CPU.")
    raise RuntimeError(f"don't know how to restore data location {location!r:.80}: kiln has only the CPU; use "
                       f"map_location='cpu'")


def _check_device(device, fn):
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"  # an int means a CUDA device, as in safetensors and torch
    if not isinstance(device, (str, _device)):
        raise TypeError(f"{fn}(): device must be a str or kiln.device, got {type(device).__name__}")
    if _device(device).type != "cpu":
        raise RuntimeError(f"{fn}(): device {device} is not available (kiln has no CUDA backend yet)")


# ---- load(): the structure description -> the object, checked as strictly as the header ----

class _Rebuilder:
    def __init__(self, tensors, where):
        self.tensors = tensors
        self.where = where
        self.used = set()

    def fail(self, msg):
        raise RuntimeError(f"{self.where}: invalid {STRUCTURE_KEY} metadata: {msg}")

    def rebuild(self, text):
        try:
            doc = json.loads(text, object_pairs_hook=self._object, parse_constant=self._constant)
        except (ValueError, RecursionError) as e:
            self.fail(f"not valid JSON ({e})")
        if not isinstance(doc, dict) or set(doc) != {"version", "root"}:
            self.fail("expected an object with keys 'version' and 'root'")
        if type(doc["version"]) is not int or doc["version"] != _STRUCTURE_VERSION:
            self.fail(f"unknown version {doc['version']!r} (this kiln reads version {_STRUCTURE_VERSION})")
        obj = self.build(doc["root"], 0)
        unused = sorted(set(self.tensors) - self.used)
        if unused:
            self.fail(f"tensor {unused[0]!r} is not part of the structure")
        return obj

    def _object(self, pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            self.fail("duplicate key in an object")
        return dict(pairs)

    def _constant(self, name):
        self.fail(f"{name} is not JSON")

    def build(self, node, depth):
        if depth > _MAX_DEPTH:
            self.fail(f"nested deeper than {_MAX_DEPTH} levels")
        if not isinstance(node, dict) or not node:
            self.fail(f"expected a node object, got {node!r:.80}")
        if "tensor" in node:
            return self.leaf(node)
        if "value" in node or "float" in node:
            return self.plain(node)
        if len(node) != 1:
            self.fail(f"a container node has exactly one key, got {sorted(node)!r:.80}")
        (kind, items), = node.items()
        if kind not in _CONTAINERS.values():
            self.fail(f"unknown node {kind!r:.80}")
        if not isinstance(items, list):
            self.fail(f"a {kind} node holds a list, got {items!r:.80}")
        if kind in ("list", "tuple"):
            values = [self.build(item, depth + 1) for item in items]
            return values if kind == "list" else tuple(values)
        out = {} if kind == "dict" else OrderedDict()
        for item in items:
            if not isinstance(item, list) or len(item) != 2:
                self.fail(f"a dict entry is a [key, node] pair, got {item!r:.80}")
            key = item[0]
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                self.fail(f"dict keys are str or int, got {key!r:.80}")
            if key in out:
                self.fail(f"duplicate dict key {key!r:.80}")
            out[key] = self.build(item[1], depth + 1)
        return out

    def plain(self, node):
        if len(node) != 1:
            self.fail(f"a value node has exactly one key, got {sorted(node)!r:.80}")
        (kind, v), = node.items()
        if kind == "float":
            if v not in ("nan", "inf", "-inf"):
                self.fail(f"a float node holds 'nan', 'inf' or '-inf', got {v!r:.80}")
            return float(v)
        if not (v is None or type(v) in _PLAIN):
            self.fail(f"a value node holds null, a bool, a number or a string, got {v!r:.80}")
        return v

    def leaf(self, node):
        from .nn.parameter import Parameter
        if not set(node) <= {"tensor", "requires_grad", "parameter"}:
            self.fail(f"unexpected keys in a tensor node: {sorted(node)!r:.80}")
        flags = {k: node.get(k, False) for k in ("requires_grad", "parameter")}
        if not all(isinstance(v, bool) for v in flags.values()):
            self.fail("requires_grad and parameter must be true or false")
        name = node["tensor"]
        if not isinstance(name, str) or name not in self.tensors:
            self.fail(f"no tensor named {name!r:.80} in the file")
        if name in self.used:
            self.fail(f"tensor {name!r:.80} is used twice")
        self.used.add(name)
        t = self.tensors[name]
        if flags["requires_grad"] and not t.is_floating_point():
            self.fail(f"tensor {name!r:.80} of dtype {t.dtype} cannot require grad")
        if flags["parameter"]:
            return Parameter(t, requires_grad=flags["requires_grad"])
        return t.requires_grad_(True) if flags["requires_grad"] else t


# torch's load/save raise AttributeError for an f that is no file (_not_a_file): not the TypeError that
# _arg_errors.typed makes of an AttributeError about an argument.
load.__kiln_typed__ = save.__kiln_typed__ = True
