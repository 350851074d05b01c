"""torch.save(..., _use_new_zipfile_serialization=False) and torch.load of such files: torch's format before
1.6, a bare stream of pickles instead of a zip archive.

The stream, as torch writes it: the magic number, the protocol version (1001) and a sys_info dict, each a
pickle of its own; the object's pickle, whose storages are persistent ids ('storage', torch.FloatStorage, key,
location, numel, view_metadata); the sorted list of storage keys; then each storage's bytes in that order,
prefixed by its element count as a little-endian int64. The object's pickle is the zip format's data.pkl with
a sixth (None) field in each storage id, so kiln writes it with the same pickler and reads it with the same
unpicklers; the storages, whose bytes come after the pickle, are allocated when the pickle names them and
filled in place once it is read (the tensors view them)."""
import io
import pickle
import struct

import numpy as np

from . import _C
from . import _torch_pickle as tp

MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001
_SYS_INFO = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
             "type_sizes": {"short": 2, "int": 4, "long": 4}}


def write_legacy(f, data_pkl, storages, protocol):
    """The legacy stream for an object pickled by pickle_checkpoint(..., legacy=True)."""
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, _SYS_INFO):
        pickle.dump(header, f, protocol=protocol)
    f.write(data_pkl)
    groups = {g.key: g for g in storages.groups.values()}
    keys = sorted(groups)  # as torch: the keys sorted as strings
    pickle.dump(keys, f, protocol=protocol)
    for key in keys:
        array = storages.data(groups[key])
        f.write(struct.pack("<q", array.size))
        f.write(memoryview(np.ascontiguousarray(array)).cast("B"))


class _HeaderUnpickler(pickle.Unpickler):
    """The header pickles hold only numbers, strings and dicts: no global is loaded from them."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"legacy checkpoint header: unexpected global {module}.{name}")


class LegacyReader:
    """persistent_load for the object's pickle: a zero-filled storage per key, filled by fill()."""

    def __init__(self, restore, where):
        self.restore, self.where = restore, where
        self.storages = {}   # key -> (_LoadedStorage of the whole storage, storage class name)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid:
            raise pickle.UnpicklingError(f"invalid persistent id {tp._short(pid)}")
        kind = tp._ascii(pid[0])
        if kind == "module" and len(pid) == 4:  # ('module', the class, its source file, its source)
            return pid[1]
        if kind != "storage" or len(pid) != 6:
            raise pickle.UnpicklingError(f"only storages and modules can be persistent ids, got {tp._short(pid)}")
        _, storage_type, key, location, numel, view_metadata = pid
        key, location = tp._ascii(key), tp._ascii(location)
        if type(storage_type) is not tp._StorageType:
            raise pickle.UnpicklingError(f"expected a torch storage type in a persistent id, got "
                                         f"{type(storage_type).__name__}")
        if type(key) is not str or type(location) is not str or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"invalid storage persistent id {tp._short(pid)}")
        if storage_type.name not in tp._STORAGES:
            dtype = tp._UNSUPPORTED_STORAGES.get(storage_type.name, f"of torch.{storage_type.name}")
            raise tp.CheckpointTypeError(f"{self.where}: storage {key!r:.40} has dtype {dtype}, which kiln does not "
                                         f"support")
        dtype = tp._KILN_DTYPES[tp._STORAGES[storage_type.name][0]]
        if key not in self.storages:
            if numel > 2 ** 40:
                raise RuntimeError(f"{self.where}: storage {key!r:.40} claims {numel} elements")
            try:
                flat = self.restore(_C.zeros([numel], dtype=dtype), location)
            except TypeError as e:  # from map_location
                raise tp.CheckpointTypeError(str(e)) from None
            self.storages[key] = (tp._LoadedStorage(flat), storage_type.name)
        root, name = self.storages[key]
        if root.flat.dtype != dtype:
            raise RuntimeError(f"{self.where}: storage {key!r:.40} is used with two dtypes")
        if view_metadata is None:
            return root
        # old files' storage views: (view key, offset, size) into the root storage
        _, offset, size = view_metadata
        if not (isinstance(offset, int) and isinstance(size, int) and 0 <= offset and offset + size <= root.numel):
            raise pickle.UnpicklingError(f"invalid storage view {tp._short(view_metadata)}")
        return tp._LoadedStorage(root.flat.narrow(0, offset, size))

    def fill(self, f):
        """Reads the key list and each storage's bytes into the storages the pickle created."""
        keys = _HeaderUnpickler(f).load()
        if not isinstance(keys, list):
            raise pickle.UnpicklingError(f"{self.where}: expected the list of storage keys")
        for key in keys:
            key = tp._ascii(key)
            if key not in self.storages:
                raise RuntimeError(f"{self.where}: storage {key!r:.40} is not used by the saved object")
            storage, name = self.storages[key]
            kiln_name, np_dtype = tp._STORAGES[name]
            np_dtype = np.dtype(np_dtype)
            head = f.read(8)
            if len(head) != 8:
                raise RuntimeError(f"{self.where}: the file ends before storage {key!r:.40}")
            (numel,) = struct.unpack("<q", head)
            if numel != storage.numel:
                raise RuntimeError(f"{self.where}: storage {key!r:.40} has {numel} elements in the file but "
                                   f"{storage.numel} in its pickle")
            raw = f.read(numel * np_dtype.itemsize)
            if len(raw) != numel * np_dtype.itemsize:
                raise RuntimeError(f"{self.where}: storage {key!r:.40} is truncated")
            array = np.frombuffer(raw, dtype=np_dtype)
            if kiln_name == "bfloat16":
                values = _C.from_numpy((array.astype("<u4") << 16).view("<f4").copy()).to(_C.bfloat16)
            elif kiln_name == "bool":
                values = _C.from_numpy(array != 0)
            else:
                values = _C.from_numpy(array.astype(np_dtype.newbyteorder("="), copy=True))
            storage.flat.copy_(values)


def is_legacy(head):
    """Whether the first bytes are a pickle (torch's legacy stream starts with the magic number's)."""
    return head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05") and head[8:9] != b"{"


def load_legacy(f, where, restore, weights_only, written, user_globals, pickle_load_args, help_text):
    """The object a legacy stream holds (f: a binary file object at the stream's start)."""
    data = f.read()
    stream = io.BytesIO(data)
    header = _HeaderUnpickler(stream)
    try:
        magic = header.load()
    except EOFError:
        raise EOFError("Ran out of input") from None
    if magic != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = _HeaderUnpickler(stream).load()
    if protocol != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    sys_info = _HeaderUnpickler(stream).load()
    if not isinstance(sys_info, dict) or not sys_info.get("little_endian", True):
        raise RuntimeError("kiln reads only little-endian legacy checkpoints")
    start = stream.tell()
    # the object's pickle ends at its STOP opcode: its bytes are what weights_only=None recognizes
    import hashlib
    import pickletools
    end = start
    for opcode, _, pos in pickletools.genops(io.BytesIO(data[start:])):
        if opcode.name == "STOP":
            end = start + pos + 1
            break
    if weights_only is None:
        weights_only = hashlib.sha256(data[start:end]).digest() not in written
    reader = LegacyReader(restore, where)
    table = tp.torch_globals()
    stream.seek(start)
    if not weights_only:
        result = tp.FullUnpickler(stream, reader, table, **pickle_load_args).load()
    else:
        unpickler = tp.WeightsOnlyUnpickler(stream, reader, table, user_globals, **pickle_load_args)
        try:
            result = unpickler.load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(help_text + str(e)) from None
    reader.fill(stream)
    return result
