"""Tensors on disk in the safetensors format; kiln never pickles.

``save_file`` / ``load_file`` work like ``safetensors.torch``: a flat dict of name -> tensor,
plus optional str -> str metadata. ``save`` / ``load`` work like ``torch.save`` /
``torch.load`` for tensors in (nested) dicts, lists and tuples: the tensors are stored under
dotted names (``"encoder.0.weight"``) and the exact nesting in the metadata entry
``kiln.structure``, so any safetensors reader sees a flat dict of tensors and kiln gets the
original object back. The file format and its checks live in C++ (runtime/serialization/).
"""
import json
import math
import os
from collections import OrderedDict

from . import _C
from ._device import device as _device

__all__ = ["save_file", "load_file", "save", "load"]

STRUCTURE_KEY = "kiln.structure"
_STRUCTURE_VERSION = 1
# Deeper nesting is refused on save, so every file kiln writes can be read back (the structure
# is rebuilt recursively).
_MAX_DEPTH = 200
_CONTAINERS = {dict: "dict", OrderedDict: "ordered_dict", list: "list", tuple: "tuple"}
_PLAIN = (bool, int, float, str)  # kept in the JSON structure description


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


def save(obj, f):
    """Saves a tensor, or tensors in (nested) dicts, lists and tuples, to a path or a binary file object.

    Plain values (None, bool, int, float, str) are kept in the structure description, so a
    checkpoint {'model': ..., 'optimizer': opt.state_dict(), 'epoch': 3} round-trips. Any other
    object raises TypeError: kiln does not pickle. Dict keys must be str or int.
    """
    pairs, root = _flatten(obj)
    structure = json.dumps({"version": _STRUCTURE_VERSION, "root": root}, separators=(",", ":"), ensure_ascii=False)
    if _is_path(f):
        _C._save_safetensors(pairs, {STRUCTURE_KEY: structure}, f, "save")
    elif hasattr(f, "write"):
        f.write(_C._save_safetensors(pairs, {STRUCTURE_KEY: structure}, None, "save"))
    else:
        raise TypeError(f"save(): f must be a path or a binary file object, got {type(f).__name__}")


def load(f, map_location=None, weights_only=None):
    """Loads what ``save`` wrote, from a path or a binary file object.

    A safetensors file written by another tool loads as a flat dict of name -> tensor.
    `map_location` may be None, "cpu", a kiln.device or a dict of locations (all tensors are
    saved from the CPU). `weights_only` is accepted for torch.load compatibility: kiln files
    hold nothing but tensors, so loading is always weights-only.
    """
    _check_device(_map_location_target(map_location), "load")
    if _is_path(f):
        where = f"load: {os.fsdecode(os.fspath(f))}"
        pairs, metadata = _C._load_safetensors_file(f, "load")
    elif hasattr(f, "read"):
        name = str(getattr(f, "name", "<file object>"))
        where = f"load: {name}"
        pairs, metadata = _C._load_safetensors_bytes(f.read(), name, "load")
    else:
        raise TypeError(f"load(): f must be a path or a binary file object, got {type(f).__name__}")
    tensors = dict(pairs)
    if STRUCTURE_KEY not in metadata:
        return tensors
    return _Rebuilder(tensors, where).rebuild(metadata[STRUCTURE_KEY])


# ---- checks shared by the entry points ----

def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


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


def _map_location_target(map_location):
    if isinstance(map_location, dict):  # {saved location: new location}; kiln saves from the CPU
        return map_location.get("cpu", "cpu")
    if callable(map_location):
        raise TypeError("load(): a callable map_location is not supported; pass a device or a dict")
    return "cpu" if map_location is None else map_location


def _check_device(device, fn):
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"  # an int means a CUDA device, as in safetensors and torch
    if not isinstance(device, (str, _device)):
        raise TypeError(f"{fn}(): device must be a str or kiln.device, got {type(device).__name__}")
    if _device(device).type != "cpu":
        raise RuntimeError(f"{fn}(): device {device} is not available (kiln has no CUDA backend yet)")


# ---- save(): an object -> (name, tensor) pairs and a structure description ----

def _path_str(path):
    return "obj" + "".join(f"[{p!r}]" for p in path)


def _flatten(obj):
    pairs, used, open_containers = [], set(), set()

    def name_for(path):
        # Dotted names as in a state_dict; a clash (keys with dots) gets a ~n suffix.
        base = ".".join(str(p) for p in path) if path else "tensor"
        name, n = base, 0
        while name in used or name == "__metadata__":
            n += 1
            name = f"{base}~{n}"
        used.add(name)
        return name

    def walk(x, path):
        if isinstance(x, _C.TensorBase):
            from .nn.parameter import Parameter
            name = name_for(path)
            pairs.append((name, x))
            node = {"tensor": name}
            if x.requires_grad:
                node["requires_grad"] = True
            if isinstance(x, Parameter):
                node["parameter"] = True
            return node
        if x is None or type(x) in _PLAIN:
            # Non-finite floats are not JSON: they are stored by name.
            return {"float": repr(x)} if type(x) is float and not math.isfinite(x) else {"value": x}
        kind = _CONTAINERS.get(type(x))
        if kind is None:
            raise TypeError(f"save(): cannot save {type(x).__name__} at {_path_str(path)}: kiln saves tensors and "
                            f"plain values (None, bool, int, float, str) in (nested) dicts, lists and tuples, and "
                            f"never pickles")
        if len(path) >= _MAX_DEPTH:
            raise ValueError(f"save(): {_path_str(path[:3])}... is nested deeper than {_MAX_DEPTH} levels")
        if id(x) in open_containers:
            raise ValueError(f"save(): {_path_str(path)} contains itself")
        open_containers.add(id(x))
        if isinstance(x, dict):
            for k in x:
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    raise TypeError(f"save(): dict keys must be str or int, got {type(k).__name__} {k!r} in "
                                    f"{_path_str(path)}")
            node = {kind: [[k, walk(v, path + [k])] for k, v in x.items()]}
        else:
            node = {kind: [walk(v, path + [i]) for i, v in enumerate(x)]}
        open_containers.discard(id(x))
        return node

    root = walk(obj, [])
    return pairs, root


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
