"""kiln.save_file / load_file: the safetensors format; kiln.load of safetensors files (and a few
kiln.save / kiln.load round trips; torch's checkpoint format is tested in test_torch_checkpoint.py).

The expected bytes come from a writer built here with struct, json and NumPy from the format's
description (and from the `safetensors` library itself when it is installed); malformed files
are built by hand, one per rule the loader checks, and each must raise a clean exception.
"""
import io
import json
import os
import pathlib
import pickle
import random
import re
import struct
from collections import OrderedDict

import numpy as np
import pytest

import kiln
from kiln import nn

# The reference writer lays tensors out by descending position of their dtype in its `Dtype`
# enum (BOOL < ... < I32 < ... < F32 < ... < F64 < I64 < ...), then by name.
REF_RANK = {"BOOL": 0, "U8": 4, "I8": 5, "I16": 11, "F16": 13, "BF16": 14, "I32": 15, "F32": 17, "F64": 19, "I64": 20}
CODE = {np.dtype(np.bool_): "BOOL", np.dtype(np.uint8): "U8", np.dtype(np.int8): "I8", np.dtype("<i2"): "I16",
        np.dtype("<i4"): "I32", np.dtype("<i8"): "I64", np.dtype("<f4"): "F32",
        np.dtype("<f8"): "F64", np.dtype("<f2"): "F16"}
KILN_DTYPES = {"BOOL": kiln.bool, "U8": kiln.uint8, "I8": kiln.int8, "I16": kiln.int16, "I32": kiln.int32, "I64": kiln.int64, "F32": kiln.float32, "F64": kiln.float64,
               "F16": kiln.float16, "BF16": kiln.bfloat16}


def reference_bytes(arrays, metadata=None):
    """A safetensors file written from the format description: 8-byte LE header length, compact JSON
    header (metadata first) padded with spaces to a multiple of 8, then C-order little-endian data."""
    order = sorted(arrays, key=lambda k: (-REF_RANK[CODE[arrays[k].dtype]], k))
    header, data, offset = {}, b"", 0
    if metadata:
        header["__metadata__"] = dict(sorted(metadata.items()))
    for name in order:
        a = arrays[name]
        raw = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": CODE[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def file_of(header, data=b""):
    """A file with the header exactly as given (str, bytes, or a dict dumped as JSON)."""
    if isinstance(header, dict):
        header = json.dumps(header)
    if isinstance(header, str):
        header = header.encode()
    return struct.pack("<Q", len(header)) + header + data


def entry(dtype="F32", shape=(1,), offsets=(0, 4)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


def arrays_of(tensors):
    return {k: np.asarray(v.numpy()) for k, v in tensors.items()}


def values_of(t):
    """t's values as NumPy (bfloat16, which NumPy lacks, as its exact float32 values)."""
    return np.ascontiguousarray(np.asarray((t.float() if t.dtype == kiln.bfloat16 else t).numpy()))


def assert_same(got, want):
    """Same names, dtypes, shapes and values (NaN-aware, bitwise for floats)."""
    assert list(got) == sorted(want)
    for k in want:
        g, w = got[k], want[k]
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape), k
        assert g.is_contiguous(), k
        assert values_of(g).tobytes() == values_of(w).tobytes(), k


def sample_arrays():
    rng = np.random.default_rng(0)
    return {
        "f32": rng.standard_normal((2, 3)).astype(np.float32),
        "f64": np.array([np.nan, -0.0, np.inf, 1e-310]),
        "i32": np.array([[-(2 ** 31), 2 ** 31 - 1]], dtype=np.int32),
        "i64": np.array(-(2 ** 63), dtype=np.int64),  # 0-dim
        "bool": np.array([True, False, True]),
        "u8": np.array([0, 1, 254, 255], dtype=np.uint8),
        "i8": np.array([[-128], [127]], dtype=np.int8),
        "i16": np.array([-(2 ** 15), 2 ** 15 - 1, 7], dtype=np.int16),
        "empty": np.zeros((0, 5), dtype=np.float32),
    }


# ---- round trips ----

@pytest.mark.parametrize("dtype", list(KILN_DTYPES.values()), ids=list(KILN_DTYPES))
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5,), (2, 3, 4)], ids=str)
def test_round_trip_every_dtype_and_shape(tmp_path, dtype, shape):
    n = int(np.prod(shape))
    t = kiln.from_numpy((np.arange(n) % 7 - 3).reshape(shape)).to(dtype)
    path = tmp_path / "t.safetensors"
    kiln.save_file({"t": t}, path)
    assert_same(kiln.load_file(path), {"t": t})


@pytest.mark.parametrize("make", [
    lambda b: b.t(),                     # transposed
    lambda b: b[:, ::2],                 # strided columns
    lambda b: b[1],                      # a row with an offset
    lambda b: b[:, 1:2].expand(3, 4),    # stride 0
    lambda b: b.t()[::2],
], ids=["t", "step", "row", "expand", "t-step"])
def test_non_contiguous_tensors_are_written_in_c_order(tmp_path, make):
    base = kiln.arange(12.0).reshape(3, 4)
    view = make(base)
    assert not view.is_contiguous() or view.storage_offset() != 0
    kiln.save_file({"v": view}, tmp_path / "v.safetensors")
    assert (tmp_path / "v.safetensors").read_bytes() == reference_bytes({"v": np.asarray(view.numpy())})
    assert kiln.load_file(tmp_path / "v.safetensors")["v"].tolist() == view.tolist()


def test_loaded_tensors_are_new_and_sorted_by_name(tmp_path):
    a = kiln.ones(2)
    kiln.save_file({"z": a, "a": a * 2, "m": kiln.zeros(1)}, tmp_path / "x.safetensors")
    out = kiln.load_file(str(tmp_path / "x.safetensors"))
    assert list(out) == ["a", "m", "z"]
    out["z"].add_(1)
    assert a.tolist() == [1.0, 1.0] and not out["z"].requires_grad


# ---- the bytes, against a writer built from the format description ----

@pytest.mark.parametrize("metadata", [None, {"format": "pt"}, {"b": "2", "a": "1", "é\n\x01\"\\": "ü\x1f/\x7f"}])
def test_bytes_match_a_file_built_by_hand(tmp_path, metadata):
    arrays = sample_arrays()
    arrays["é/ünï\tcode \"q\" \\ 😀"] = np.array([1.5], dtype=np.float32)
    kiln.save_file({k: kiln.from_numpy(v.copy()) for k, v in arrays.items()}, tmp_path / "m.safetensors", metadata)
    assert (tmp_path / "m.safetensors").read_bytes() == reference_bytes(arrays, metadata)


def test_small_file_bytes_written_out(tmp_path):
    # Worked out by hand (and so a check of reference_bytes too): I64 before F32, 107 + 5 spaces of header.
    header = b'{"b":{"dtype":"I64","shape":[],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}'
    assert len(header) == 107
    expected = (bytes([112, 0, 0, 0, 0, 0, 0, 0]) + header + b"     " + bytes([2, 1, 0, 0, 0, 0, 0, 0])
                + bytes([0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0]))
    assert reference_bytes({"b": np.array(258, dtype=np.int64), "a": np.array([1.0, -2.0], dtype=np.float32)}) == expected
    kiln.save_file({"a": kiln.tensor([1.0, -2.0]), "b": kiln.tensor(258)}, tmp_path / "s.safetensors")
    assert (tmp_path / "s.safetensors").read_bytes() == expected


def test_empty_dict(tmp_path):
    expected = b"\x08" + b"\0" * 7 + b"{}      "
    assert reference_bytes({}) == expected
    kiln.save_file({}, tmp_path / "e.safetensors")
    assert (tmp_path / "e.safetensors").read_bytes() == expected
    assert kiln.load_file(tmp_path / "e.safetensors") == {}


def test_reads_a_file_built_by_hand_in_any_order(tmp_path):
    # Offsets in the opposite order of the names, keys in an unusual order, whitespace: all valid.
    header = ('  {"b": {"shape": [2], "data_offsets": [0, 8], "dtype": "I32"},\n'
              '   "a": {"data_offsets": [8, 16], "dtype": "F64", "shape": []}, "__metadata__": {"k": "v"}}\t')
    data = struct.pack("<2i", 7, -8) + struct.pack("<d", 0.25)
    (tmp_path / "h.safetensors").write_bytes(file_of(header, data))
    out = kiln.load_file(tmp_path / "h.safetensors")
    assert list(out) == ["a", "b"]
    assert out["a"].dtype == kiln.float64 and out["a"].shape == () and out["a"].item() == 0.25
    assert out["b"].dtype == kiln.int32 and out["b"].tolist() == [7, -8]


# ---- cross-checks with the reference library, when installed ----

def test_cross_check_with_the_safetensors_library(tmp_path):
    st = pytest.importorskip("safetensors.numpy", reason="the safetensors library is not installed")
    arrays = sample_arrays()
    for metadata in (None, {"format": "pt"}):
        ours = tmp_path / "ours.safetensors"
        kiln.save_file({k: kiln.from_numpy(v.copy()) for k, v in arrays.items()}, ours, metadata)
        assert ours.read_bytes() == st.save(arrays, metadata=metadata)
        back = st.load_file(str(ours))
        assert sorted(back) == sorted(arrays)
        for k in arrays:
            assert back[k].dtype == arrays[k].dtype and back[k].tobytes() == arrays[k].tobytes()
    theirs = tmp_path / "theirs.safetensors"
    st.save_file(arrays, str(theirs), metadata={"x": "y"})
    assert_same(kiln.load_file(theirs), {k: kiln.from_numpy(v.copy()) for k, v in arrays.items()})


def test_cross_check_with_safetensors_torch(tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    st = pytest.importorskip("safetensors.torch", reason="the safetensors library is not installed")
    arrays = sample_arrays()
    kiln.save_file({k: kiln.from_numpy(v.copy()) for k, v in arrays.items()}, tmp_path / "k.safetensors")
    back = st.load_file(str(tmp_path / "k.safetensors"))
    for k, a in arrays.items():
        assert back[k].numpy().tobytes() == a.tobytes()
    st.save_file({k: torch.from_numpy(v.copy()) for k, v in arrays.items()}, str(tmp_path / "t.safetensors"))
    assert (tmp_path / "t.safetensors").read_bytes() == (tmp_path / "k.safetensors").read_bytes()


def test_state_dicts_move_between_torch_and_kiln(tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    want = tmodel(torch.from_numpy(x)).detach().numpy()
    # torch -> file (written here from the format description) -> kiln
    arrays = {k: v.detach().numpy() for k, v in tmodel.state_dict().items()}
    (tmp_path / "t.safetensors").write_bytes(reference_bytes(arrays))
    kmodel = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    kmodel.load_state_dict(kiln.load_file(tmp_path / "t.safetensors"))
    np.testing.assert_allclose(kmodel(kiln.from_numpy(x)).detach().numpy(), want, rtol=1e-6, atol=1e-6)
    # kiln -> file -> read here -> torch
    kiln.save_file(kmodel.state_dict(), tmp_path / "k.safetensors")
    tensors, _ = reference_read((tmp_path / "k.safetensors").read_bytes())
    fresh = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    fresh.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in tensors.items()})
    np.testing.assert_array_equal(fresh(torch.from_numpy(x)).detach().numpy(), want)


def reference_read(data):
    """The tensors and metadata of a safetensors file, read here with struct, json and NumPy."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", {})
    np_dtype = {code: dt for dt, code in CODE.items()}
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = data[8 + n + begin:8 + n + end]
        tensors[name] = np.frombuffer(raw, dtype=np_dtype[info["dtype"]]).reshape(info["shape"])
    return tensors, metadata


# ---- malformed files: each rule, a clean exception naming the problem ----

F4 = b"\0" * 4
W = lambda **kw: {"w": entry(**kw)}  # noqa: E731
MALFORMED = [
    # (id, file bytes, exception, message)
    ("empty file", b"", RuntimeError, "the file is 0 bytes, too short for the 8-byte header length"),
    ("7 bytes", b"\x02" + b"\0" * 6, RuntimeError, "the file is 7 bytes"),
    ("header over 100 MB", struct.pack("<Q", 100_000_001), RuntimeError, "header length 100000001 is over the limit"),
    ("header length 2**64-1", b"\xff" * 8 + b"{}", RuntimeError, "header length 18446744073709551615 is over"),
    ("header past the end", struct.pack("<Q", 16) + b"{}", RuntimeError, r"runs past the end of the file \(10 bytes\)"),
    ("empty header", file_of(b""), RuntimeError, "unexpected end of header"),
    ("header not an object", file_of("[]"), RuntimeError, "the header must be an object, got a list"),
    ("header a string", file_of('"x"'), RuntimeError, "the header must be an object, got a string"),
    ("data after the object", file_of("{} {}"), RuntimeError, "unexpected data after the top-level object"),
    ("NUL padding", file_of(b"{}\0\0"), RuntimeError, "unexpected data after the top-level object"),
    ("trailing comma in object", file_of('{"__metadata__":{"a":"b",}}'), RuntimeError, "trailing comma"),
    ("trailing comma in list", file_of(json.dumps(W()).replace("[1]", "[1,]"), F4), RuntimeError, "trailing comma"),
    ("missing comma", file_of('{"__metadata__":{"a":"b" "c":"d"}}'), RuntimeError, "expected ',' or '}'"),
    ("missing colon", file_of('{"__metadata__" {}}'), RuntimeError, "expected ':' after a key"),
    ("unclosed object", file_of('{"__metadata__":{}'), RuntimeError, "unexpected end of header"),
    ("comment", file_of('{/* c */}'), RuntimeError, "expected a string key in double quotes"),
    ("line comment", file_of('{} // c'), RuntimeError, "unexpected data after the top-level object"),
    ("single quotes", file_of("{'w': 1}"), RuntimeError, "expected a string key in double quotes"),
    ("unquoted key", file_of("{w: 1}"), RuntimeError, "expected a string key in double quotes"),
    ("NaN", file_of(json.dumps(W()).replace("[1]", "[NaN]"), F4), RuntimeError, "unexpected character 'N'"),
    ("Infinity", file_of(json.dumps(W()).replace("[1]", "[Infinity]"), F4), RuntimeError, "unexpected character 'I'"),
    ("-Infinity", file_of(json.dumps(W()).replace("[1]", "[-Infinity]"), F4), RuntimeError, "expected a digit"),
    ("leading zero", file_of(json.dumps(W()).replace("[1]", "[01]"), F4), RuntimeError, "leading zeros"),
    ("plus sign", file_of(json.dumps(W()).replace("[1]", "[+1]"), F4), RuntimeError, "unexpected character '\\+'"),
    ("hex number", file_of(json.dumps(W()).replace("[1]", "[0x1]"), F4), RuntimeError, "expected ',' or ']'"),
    ("bare decimal point", file_of(json.dumps(W()).replace("[1]", "[1.]"), F4), RuntimeError, "after the decimal point"),
    ("empty exponent", file_of(json.dumps(W()).replace("[1]", "[1e]"), F4), RuntimeError, "in the exponent"),
    ("bad literal", file_of('{"__metadata__":tru}'), RuntimeError, "unexpected character 't'"),
    ("bad escape", file_of(r'{"__metadata__":{"k":"\q"}}'), RuntimeError, r"invalid escape '\\q'"),
    ("short \\u", file_of(r'{"__metadata__":{"k":"\u12"}}'), RuntimeError, "four hex digits"),
    ("lone high surrogate", file_of(r'{"__metadata__":{"k":"\ud800x"}}'), RuntimeError, "high surrogate not followed"),
    ("high + high", file_of(r'{"__metadata__":{"k":"\ud800\ud800"}}'), RuntimeError, "high surrogate not followed"),
    ("lone low surrogate", file_of(r'{"__metadata__":{"k":"\udc00"}}'), RuntimeError, "lone low surrogate"),
    ("raw newline in string", file_of('{"__metadata__":{"k":"a\nb"}}'), RuntimeError, "control character"),
    ("raw tab in key", file_of('{"\t":{}}'), RuntimeError, "control character"),
    ("unterminated string", file_of('{"__metadata__":{"k":"abc'), RuntimeError, "unterminated string"),
    ("invalid UTF-8 byte", file_of(b'{"__metadata__":{"k":"\xff"}}'), RuntimeError, "invalid UTF-8"),
    ("overlong UTF-8", file_of(b'{"__metadata__":{"k":"\xc0\x80"}}'), RuntimeError, "invalid UTF-8"),
    ("UTF-8 surrogate", file_of(b'{"__metadata__":{"k":"\xed\xb0\x80"}}'), RuntimeError, "invalid UTF-8"),
    ("UTF-8 past U+10FFFF", file_of(b'{"__metadata__":{"k":"\xf4\x90\x80\x80"}}'), RuntimeError, "invalid UTF-8"),
    ("truncated UTF-8", file_of(b'{"__metadata__":{"k":"\xe2\x82"}}'), RuntimeError, "invalid UTF-8"),
    ("non-ASCII outside strings", file_of(b'{\xc3\xa9}'), RuntimeError, "expected a string key"),
    ("BOM", file_of(b'\xef\xbb\xbf{}'), RuntimeError, r"unexpected byte 0xef"),
    ("deep nesting", file_of("[" * 100_000), RuntimeError, "the header must be an object, got a list"),
    ("deep nesting in shape", file_of('{"w":{"shape":' + "[" * 100_000), RuntimeError, "got a list"),
    ("duplicate tensor", file_of('{"w":%s,"w":%s}' % (json.dumps(entry()), json.dumps(entry(offsets=(4, 8)))), F4 * 2),
     RuntimeError, "duplicate tensor name 'w'"),
    ("duplicate __metadata__", file_of('{"__metadata__":{},"__metadata__":{}}'), RuntimeError,
     "duplicate key '__metadata__'"),
    ("duplicate metadata key", file_of('{"__metadata__":{"k":"a","k":"b"}}'), RuntimeError,
     "duplicate key 'k' in __metadata__"),
    ("duplicate dtype key", file_of('{"w":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}', F4),
     RuntimeError, "tensor 'w': duplicate key 'dtype'"),
    ("metadata null", file_of('{"__metadata__":null}'), RuntimeError, "__metadata__ must be an object, got null"),
    ("metadata a list", file_of('{"__metadata__":[]}'), RuntimeError, "__metadata__ must be an object, got a list"),
    ("metadata value int", file_of('{"__metadata__":{"k":1}}'), RuntimeError,
     "__metadata__ entry 'k' must be a string, got a number"),
    ("metadata value object", file_of('{"__metadata__":{"k":{}}}'), RuntimeError, "must be a string, got an object"),
    ("tensor not an object", file_of('{"w":[1]}'), RuntimeError, "tensor 'w' must be an object, got a list"),
    ("tensor null", file_of('{"w":null}'), RuntimeError, "tensor 'w' must be an object, got null"),
    ("missing dtype", file_of({"w": {"shape": [1], "data_offsets": [0, 4]}}, F4), RuntimeError,
     "tensor 'w': missing key 'dtype'"),
    ("missing shape", file_of({"w": {"dtype": "F32", "data_offsets": [0, 4]}}, F4), RuntimeError,
     "tensor 'w': missing key 'shape'"),
    ("missing data_offsets", file_of({"w": {"dtype": "F32", "shape": [1]}}, F4), RuntimeError,
     "tensor 'w': missing key 'data_offsets'"),
    ("extra key", file_of({"w": dict(entry(), extra=1)}, F4), RuntimeError, "tensor 'w': unexpected key 'extra'"),
    ("unknown dtype", file_of(W(dtype="F33"), F4), RuntimeError, "tensor 'w': unknown dtype 'F33'"),
    ("lowercase dtype", file_of(W(dtype="f32"), F4), RuntimeError, "unknown dtype 'f32'"),
    ("dtype not a string", file_of({"w": dict(entry(), dtype=4)}, F4), RuntimeError, "dtype must be a string, got a number"),
    ("shape not a list", file_of({"w": dict(entry(), shape=1)}, F4), RuntimeError, "shape must be a list, got a number"),
    ("negative size", file_of(W(shape=(-1,)), F4), RuntimeError, "shape entry must be a non-negative integer, got -1"),
    ("negative zero", file_of(json.dumps(W()).replace("[1]", "[-0]"), F4), RuntimeError, "got -0"),
    ("float size", file_of(json.dumps(W()).replace("[1]", "[1.0]"), F4), RuntimeError, "got 1.0"),
    ("exponent size", file_of(json.dumps(W()).replace("[1]", "[1E0]"), F4), RuntimeError, "got 1E0"),
    ("bool size", file_of(json.dumps(W()).replace("[1]", "[true]"), F4), RuntimeError, "got a boolean"),
    ("string size", file_of(W(shape=("1",)), F4), RuntimeError, "got a string"),
    ("size over int64", file_of(W(shape=(2 ** 63,)), F4), RuntimeError, "shape entry 9223372036854775808 does not fit int64"),
    ("size over uint64", file_of(W(shape=(10 ** 20,)), F4), RuntimeError, "100000000000000000000 is too large"),
    ("numel over int64", file_of(W(shape=(2 ** 32, 2 ** 32)), F4), RuntimeError,
     r"shape \[4294967296, 4294967296\] has more elements than int64 can count"),
    ("numel over int64 before a 0", file_of(W(shape=(2 ** 32, 2 ** 32, 0), offsets=(0, 0))), RuntimeError,
     "has more elements than int64 can count"),
    ("bytes over 64 bits", file_of(W(dtype="F64", shape=(2 ** 62,))), RuntimeError, "needs more bytes than 64 bits count"),
    ("65 dims", file_of(W(shape=(1,) * 65), F4), RuntimeError, "tensor 'w': shape has more than 64 entries"),
    ("offsets not a list", file_of({"w": dict(entry(), data_offsets=4)}, F4), RuntimeError,
     "data_offsets must be a list, got a number"),
    ("one offset", file_of(W(offsets=(0,)), F4), RuntimeError, r"data_offsets must be two integers \[begin, end\], got 1"),
    ("three offsets", file_of(W(offsets=(0, 4, 4)), F4), RuntimeError, "data_offsets has more than 2 entries"),
    ("negative offset", file_of(W(offsets=(-4, 0)), F4), RuntimeError, "data_offsets entry must be a non-negative integer"),
    ("end before begin", file_of(W(offsets=(4, 0)), F4), RuntimeError, r"data_offsets \[4, 0\] end before they begin"),
    ("offsets vs shape", file_of(W(shape=(2, 3), offsets=(0, 12)), F4 * 3), RuntimeError,
     r"tensor 'w': data_offsets \[0, 12\] do not match shape \[2, 3\] of F32 \(24 bytes\)"),
    ("offsets past the buffer", file_of(W(offsets=(4, 8)), F4), RuntimeError,
     r"data_offsets \[4, 8\] run past the end of the data buffer \(4 bytes\)"),
    ("offset over int64", file_of(W(offsets=(2 ** 63, 2 ** 63 + 4)), F4), RuntimeError,
     "data_offsets entry 9223372036854775808 does not fit int64"),
    ("offset over uint64", file_of(W(offsets=(0, 2 ** 64)), F4), RuntimeError, "18446744073709551616 is too large"),
    ("hole at the start", file_of(W(offsets=(4, 8)), F4 * 2), RuntimeError,
     r"bytes \[0, 4\) of the data buffer belong to no tensor"),
    ("hole in the middle", file_of({"a": entry(), "b": entry(offsets=(8, 12))}, F4 * 3), RuntimeError,
     r"bytes \[4, 8\) of the data buffer belong to no tensor"),
    ("overlap", file_of({"a": entry(shape=(2,), offsets=(0, 8)), "b": entry(offsets=(4, 8))}, F4 * 2), RuntimeError,
     r"tensor 'b' \(data_offsets \[4, 8\]\) overlaps tensor 'a' \(data_offsets \[0, 8\]\)"),
    ("same offsets twice", file_of({"a": entry(), "b": entry()}, F4), RuntimeError, "overlaps"),
    ("empty tensor inside another", file_of({"a": entry(shape=(2,), offsets=(0, 8)), "z": entry(shape=(0,), offsets=(4, 4))},
                                             F4 * 2), RuntimeError, "tensor 'z'.*overlaps tensor 'a'"),
    ("bytes after the last tensor", file_of(W(), F4 + b"x"), RuntimeError,
     "the data buffer has 5 bytes but the tensors cover 4"),
    ("data but no tensors", file_of("{}", b"x"), RuntimeError, "the data buffer has 1 bytes but the tensors cover 0"),
    ("sub-byte dtype split", file_of(W(dtype="F4", shape=(3,), offsets=(0, 2)), b"xy"), RuntimeError,
     "does not fill whole bytes"),
    ("long hostile name", file_of({"x" * 5000: entry(dtype="F3")}), RuntimeError, r"tensor 'x{100}'\.\.\. \(5000 bytes\)"),
    ("name with a newline", file_of({"a\nb": entry(dtype="?")}), RuntimeError, r"tensor 'a\\nb'"),
    # known dtypes kiln cannot hold: TypeError, after every other check passed
    ("U16", file_of(W(dtype="U16", shape=(2,)), F4), TypeError,
     r"tensor 'w' has dtype U16, which kiln does not support yet \(supported: BOOL, U8, I8, I16, F16, BF16, I32, "
     r"F32, F64, I64\)"),
    ("U32", file_of(W(dtype="U32", shape=(1,)), F4), TypeError, "has dtype U32, which kiln does not support yet"),
    ("F8_E4M3", file_of(W(dtype="F8_E4M3", shape=(4,)), F4), TypeError, "has dtype F8_E4M3"),
    ("U64", file_of(W(dtype="U64", shape=(0,), offsets=(0, 0))), TypeError, "has dtype U64"),
    ("damaged file with BF16", file_of(W(dtype="BF16", shape=(2,)), b"abc"), RuntimeError, "run past the end"),
]


@pytest.mark.parametrize("data,exc,message", [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_file(tmp_path, data, exc, message):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(exc) as info:
        kiln.load_file(path)
    text = str(info.value)
    assert text.startswith(f"load_file: {path}: "), text
    assert re.search(message, text), text
    assert type(info.value) is exc  # not a subclass that another handler would catch differently
    # kiln.load is torch.load: bytes that are neither a zip nor a safetensors file (whose JSON
    # header starts at byte 8) read as torch's legacy pickle stream would, EOFError when empty and
    # pickle.UnpicklingError otherwise, with the same diagnosis
    load_exc = EOFError if not data else pickle.UnpicklingError if data[8:9] != b"{" else exc
    with pytest.raises(load_exc, match=message):
        kiln.load(io.BytesIO(data))


def test_every_safetensors_dtype_code_loads_or_is_not_supported():
    # Every code of the reference library either loads or is named "not supported".
    codes = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ",
             "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64"]
    for code in codes:
        data = file_of(W(dtype=code, shape=(0,), offsets=(0, 0)))
        if code in KILN_DTYPES:
            assert kiln.load(io.BytesIO(data))["w"].dtype == KILN_DTYPES[code]
        else:
            with pytest.raises(TypeError, match=f"has dtype {code}, which kiln does not support yet"):
                kiln.load(io.BytesIO(data))


def small_valid_file():
    return reference_bytes({"a": np.arange(3, dtype=np.float32), "b": np.array([[4], [5]], dtype=np.int64),
                            "c": np.array(True)}, {"k": "v"})


def test_every_truncation_raises_cleanly(tmp_path):
    good = small_valid_file()
    path = tmp_path / "t.safetensors"
    for n in range(len(good)):
        path.write_bytes(good[:n])
        with pytest.raises(RuntimeError, match=f"^load_file: {path}: "):
            kiln.load_file(path)


def test_random_byte_flips_raise_cleanly_or_load(tmp_path):
    good = small_valid_file()
    rng = random.Random(0)
    path = tmp_path / "f.safetensors"
    outcomes = {"loaded": 0, "RuntimeError": 0, "TypeError": 0}
    for _ in range(2000):
        bad = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            bad[rng.randrange(len(bad))] ^= rng.randint(1, 255)
        path.write_bytes(bytes(bad))
        try:
            out = kiln.load_file(path)
        except (RuntimeError, TypeError) as e:
            assert str(e).startswith(f"load_file: {path}: "), e
            outcomes[type(e).__name__] += 1
        else:
            assert all(isinstance(v, kiln.Tensor) for v in out.values())
            outcomes["loaded"] += 1
    assert outcomes["loaded"] > 0 and outcomes["RuntimeError"] > 0, outcomes


def test_bool_bytes_other_than_0_and_1_read_as_true():
    t = kiln.load(io.BytesIO(file_of(W(dtype="BOOL", shape=(4,)), bytes([0, 1, 2, 255]))))["w"]
    assert t.tolist() == [False, True, True, True]
    assert (t == kiln.tensor([False, True, True, True])).all()


# ---- files that cannot be opened ----

def test_missing_file_is_file_not_found(tmp_path):
    missing = tmp_path / "nope.safetensors"
    with pytest.raises(FileNotFoundError) as info:
        kiln.load_file(missing)
    assert info.value.errno == 2 and info.value.filename == str(missing)
    with pytest.raises(FileNotFoundError):
        kiln.load(str(missing))
    with pytest.raises(FileNotFoundError):
        kiln.save_file({"a": kiln.ones(1)}, tmp_path / "no" / "dir.safetensors")
    with pytest.raises(IsADirectoryError):
        kiln.load_file(tmp_path)
    with pytest.raises(IsADirectoryError):
        kiln.save_file({}, tmp_path)


def test_bad_input_leaves_an_existing_file_alone(tmp_path):
    path = tmp_path / "keep.safetensors"
    kiln.save_file({"a": kiln.ones(2)}, path)
    before = path.read_bytes()
    for bad in ({"__metadata__": kiln.ones(1)}, {"a": 1}, {"a": kiln.ones(1), "b": "x"}):
        with pytest.raises((TypeError, ValueError)):
            kiln.save_file(bad, path)
    assert path.read_bytes() == before


# ---- save_file / load_file argument checks (types as in safetensors and PyTorch) ----

def test_save_file_argument_errors(tmp_path):
    p = tmp_path / "x.safetensors"
    with pytest.raises(TypeError, match=r"save_file\(\): expected a dict of str -> kiln.Tensor, got list"):
        kiln.save_file([kiln.ones(1)], p)
    with pytest.raises(TypeError, match="tensor names must be str, got int 3"):
        kiln.save_file({3: kiln.ones(1)}, p)
    with pytest.raises(TypeError, match="key `a` is invalid, expected kiln.Tensor but received <class 'int'>"):
        kiln.save_file({"a": 1}, p)
    with pytest.raises(TypeError, match="metadata must be a dict of str -> str"):
        kiln.save_file({}, p, metadata={"k": 1})
    with pytest.raises(TypeError, match="metadata must be a dict of str -> str"):
        kiln.save_file({}, p, metadata=[("k", "v")])
    with pytest.raises(ValueError, match="'__metadata__' names the metadata and cannot name a tensor"):
        kiln.save_file({"__metadata__": kiln.ones(1)}, p)
    with pytest.raises(UnicodeEncodeError):
        kiln.save_file({"\ud800": kiln.ones(1)}, p)
    with pytest.raises(TypeError):
        kiln.save_file({}, 3.5)


def test_load_file_device(tmp_path):
    kiln.save_file({"a": kiln.ones(1)}, tmp_path / "d.safetensors")
    assert kiln.load_file(tmp_path / "d.safetensors", device=kiln.device("cpu"))["a"].tolist() == [1.0]
    with pytest.raises(RuntimeError, match="device cuda is not available"):
        kiln.load_file(tmp_path / "d.safetensors", device="cuda")
    with pytest.raises(RuntimeError, match="device cuda:0 is not available"):
        kiln.load_file(tmp_path / "d.safetensors", device=0)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):  # torch.device('tpu')'s error
        kiln.load_file(tmp_path / "d.safetensors", device="tpu")


def test_shared_and_requires_grad_tensors_save_their_values(tmp_path):
    w = kiln.ones(2, 3, requires_grad=True)
    kiln.save_file({"w": w, "wt": w.t(), "row": w[0]}, tmp_path / "s.safetensors")
    out = kiln.load_file(tmp_path / "s.safetensors")
    assert out["wt"].tolist() == [[1.0, 1.0]] * 3 and out["row"].tolist() == [1.0] * 3
    assert not out["w"].requires_grad and w.grad is None


# ---- save / load ----

def test_save_load_nested_round_trip(tmp_path):
    from kiln.nn import Parameter
    obj = {
        "model": OrderedDict([("0.weight", kiln.ones(2, 2)), ("0.bias", kiln.zeros(2))]),
        "extra": [kiln.tensor(1), (kiln.tensor([True]), {"deep": kiln.tensor(2.5, dtype=kiln.float64)})],
        3: kiln.arange(3),
        "a.b": kiln.tensor([1.0]),
        "a": {"b": kiln.tensor([2.0])},  # the same dotted name as the key above
        "p": Parameter(kiln.ones(1)),
        "g": kiln.ones(1, requires_grad=True),
        "empty": {},
        "none_list": [],
    }
    for f in (tmp_path / "n.kiln", str(tmp_path / "s.kiln"), io.BytesIO()):
        kiln.save(obj, f)
        if isinstance(f, io.BytesIO):
            f.seek(0)
        back = kiln.load(f, map_location="cpu", weights_only=True)
        check_same_structure(back, obj)
    assert list(back) == list(obj)
    assert type(back["model"]) is OrderedDict and type(back["extra"][1]) is tuple
    assert isinstance(back["p"], Parameter) and back["p"].requires_grad
    assert back["g"].requires_grad and back["g"].is_leaf and not isinstance(back["g"], Parameter)


def check_same_structure(got, want):
    assert type(got) is type(want) or (isinstance(want, kiln.Tensor) and isinstance(got, kiln.Tensor))
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            check_same_structure(got[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            check_same_structure(g, w)
    else:
        assert got.dtype == want.dtype and got.shape == want.shape and got.tolist() == want.tolist()
        assert got.requires_grad == want.requires_grad


def old_kiln_save_file(tmp_path):
    """A file as kiln.save wrote it before it switched to torch's format: safetensors, the tensors
    under dotted names and the nesting in the metadata entry kiln.structure."""
    structure = {"version": 1, "root": {"dict": [
        ["model", {"ordered_dict": [["0.weight", {"tensor": "model.0.weight"}],
                                    ["0.bias", {"tensor": "model.0.bias", "requires_grad": True}]]}],
        ["extra", {"list": [{"tensor": "extra.0", "parameter": True, "requires_grad": True},
                            {"tuple": [{"value": 3}, {"value": "s"}, {"value": None}, {"float": "inf"}]}]}],
        [7, {"value": 2.5}]]}}
    arrays = {"model.0.weight": np.ones((2, 2), np.float32), "model.0.bias": np.zeros(2, np.float32),
              "extra.0": np.arange(3, dtype=np.float64)}
    path = tmp_path / "old.safetensors"
    path.write_bytes(reference_bytes(arrays, {"kiln.structure": json.dumps(structure)}))
    return path


def test_load_reads_safetensors_files_the_old_kiln_save_wrote(tmp_path):
    from kiln.nn import Parameter
    path = old_kiln_save_file(tmp_path)
    for f in (path, io.BytesIO(path.read_bytes())):
        back = kiln.load(f)
        assert list(back) == ["model", "extra", 7] and type(back["model"]) is OrderedDict
        assert back["model"]["0.weight"].tolist() == [[1.0, 1.0]] * 2 and back["model"]["0.bias"].requires_grad
        assert isinstance(back["extra"][0], Parameter) and back["extra"][0].dtype == kiln.float64
        assert back["extra"][1] == (3, "s", None, float("inf")) and back[7] == 2.5
    # A safetensors file without kiln's structure loads as its flat dict.
    kiln.save_file({"x": kiln.ones(1)}, tmp_path / "plain.safetensors")
    assert list(kiln.load(tmp_path / "plain.safetensors")) == ["x"]
    assert list(kiln.load(tmp_path / "plain.safetensors", map_location=lambda s, loc: None)) == ["x"]
    with pytest.raises(RuntimeError, match="CUDA"):
        kiln.load(tmp_path / "plain.safetensors", map_location="cuda")


def test_save_writes_torch_checkpoints_not_safetensors(tmp_path):
    import zipfile
    kiln.save({"a": kiln.arange(4)}, tmp_path / "t.pt")
    assert (tmp_path / "t.pt").read_bytes()[:4] == b"PK\x03\x04"
    assert zipfile.ZipFile(tmp_path / "t.pt").namelist() == ["t/data.pkl", "t/byteorder", "t/data/0", "t/version"]
    kiln.save(kiln.arange(4), tmp_path / "t.pt")
    assert kiln.load(tmp_path / "t.pt").tolist() == [0, 1, 2, 3]


def test_save_pickles_other_values(tmp_path):
    obj = {"bytes": b"s\x00\xff", "empty": b"", "set": {1, 2}, "frozen": frozenset({"a"}), "c": 1 + 2j,
           "sl": slice(1, None, 2), (1, 2): kiln.ones(1), True: "key", "ba": bytearray(b"xy"),
           "dtype": kiln.bfloat16, "size": kiln.Size([2, 3]), "device": kiln.device("cpu")}
    kiln.save(obj, tmp_path / "x.pt")
    back = kiln.load(tmp_path / "x.pt")
    assert list(back) == list(obj)
    for k, v in obj.items():
        if not isinstance(v, kiln.Tensor):
            assert back[k] == v and type(back[k]) is type(v), k
    # an object of some other class is pickled by name: weights_only refuses it, False loads it,
    # and so does the default, since this process wrote those bytes itself
    kiln.save({"o": OrderedDict, "d": pathlib.PurePosixPath("/x")}, tmp_path / "o.pt")
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL pathlib.PurePosixPath"):
        kiln.load(tmp_path / "o.pt", weights_only=True)
    assert kiln.load(tmp_path / "o.pt", weights_only=False)["d"] == pathlib.PurePosixPath("/x")
    assert kiln.load(tmp_path / "o.pt")["d"] == pathlib.PurePosixPath("/x")


def test_default_load_trusts_only_pickles_this_process_wrote(tmp_path):
    """kiln.save(model) then kiln.load(f) returns the model (torch 1.13's default, which
    pytorch/examples' word language model relies on); the same objects saved by torch, or kiln's
    file with one byte of its pickle changed, are refused without weights_only=False."""
    import torch
    model = kiln.nn.Sequential(kiln.nn.Linear(3, 2), kiln.nn.ReLU())
    kiln.save(model, tmp_path / "m.pt")
    back = kiln.load(tmp_path / "m.pt")
    assert isinstance(back, kiln.nn.Sequential) and back[0].weight.tolist() == model[0].weight.tolist()
    torch.save(torch.nn.Sequential(torch.nn.Linear(3, 2)), tmp_path / "t.pt")
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        kiln.load(tmp_path / "t.pt")
    assert isinstance(kiln.load(tmp_path / "t.pt", weights_only=False), kiln.nn.Sequential)
    # The same archive with its pickle altered (a protocol-2 pickle ends with b"."; a no-op opcode
    # b"N0" (push None, pop) before it changes the bytes, not the objects)
    import zipfile
    with zipfile.ZipFile(tmp_path / "m.pt") as z:
        records = {n: z.read(n) for n in z.namelist()}
    pkl = next(n for n in records if n.endswith("data.pkl"))
    records[pkl] = records[pkl][:-1] + b"N0."
    with zipfile.ZipFile(tmp_path / "m2.pt", "w", zipfile.ZIP_STORED) as z:
        for n, data in records.items():
            z.writestr(n, data)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        kiln.load(tmp_path / "m2.pt")
    assert isinstance(kiln.load(tmp_path / "m2.pt", weights_only=False), kiln.nn.Sequential)


def test_save_keeps_plain_values_of_a_checkpoint(tmp_path):
    model = kiln.nn.Linear(3, 2)
    opt = kiln.optim.Adam(model.parameters(), lr=0.01)
    model(kiln.ones(4, 3)).sum().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 7, "best": float("inf"),
            "loss": 0.25, "name": "run-1", "note": None, "done": False, "nan": float("nan")}
    kiln.save(ckpt, tmp_path / "ckpt.pt")
    back = kiln.load(tmp_path / "ckpt.pt")
    assert (back["epoch"], back["best"], back["loss"], back["name"], back["note"], back["done"]) == \
        (7, float("inf"), 0.25, "run-1", None, False)
    assert type(back["epoch"]) is int and back["nan"] != back["nan"]
    assert back["optimizer"]["param_groups"] == ckpt["optimizer"]["param_groups"]
    fresh = kiln.optim.Adam(kiln.nn.Linear(3, 2).parameters(), lr=0.5)
    fresh.load_state_dict(back["optimizer"])
    assert fresh.param_groups[0]["lr"] == 0.01


def test_save_cycles_shared_objects_and_bad_targets(tmp_path):
    d = {"a": kiln.ones(1)}
    d["self"] = d
    d["again"] = [d["a"], d["a"]]
    kiln.save(d, tmp_path / "c.pt")
    back = kiln.load(tmp_path / "c.pt")
    assert back["self"] is back and back["again"][0] is back["a"] and back["again"][1] is back["a"]
    deep = kiln.ones(1)
    for _ in range(250):
        deep = [deep]
    kiln.save(deep, tmp_path / "deep.pt")
    assert len(kiln.load(tmp_path / "deep.pt")) == 1
    with pytest.raises(AttributeError, match="'int' object has no attribute 'write'"):  # torch's class
        kiln.save({}, 3)
    with pytest.raises(AttributeError, match="'int' object has no attribute 'seek'"):
        kiln.load(3)
    with pytest.raises(TypeError, match="map_location must be None, a str, a device, a dict or a callable"):
        kiln.load(tmp_path / "c.pt", map_location=3)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        kiln.load(tmp_path / "c.pt", map_location={"cpu": "cuda"})
    assert kiln.load(tmp_path / "c.pt", map_location=kiln.device("cpu"))["a"].tolist() == [1.0]


def structure_file(structure, tensors=None):
    """A file holding `tensors` (name -> float list) and the given kiln.structure text."""
    tensors = {"a": [1.0]} if tensors is None else tensors
    arrays = {k: np.array(v, dtype=np.float32) for k, v in tensors.items()}
    text = structure if isinstance(structure, str) else json.dumps(structure)
    return reference_bytes(arrays, {"kiln.structure": text})


BAD_STRUCTURES = [
    ("not JSON", "{", "not valid JSON"),
    ("NaN", '{"version":NaN,"root":{"tensor":"a"}}', "NaN is not JSON"),
    ("duplicate key", '{"version":1,"version":1,"root":{"tensor":"a"}}', "duplicate key"),
    ("not an object", [1], "expected an object with keys 'version' and 'root'"),
    ("extra key", {"version": 1, "root": {"tensor": "a"}, "x": 1}, "expected an object with keys"),
    ("version 2", {"version": 2, "root": {"tensor": "a"}}, "unknown version 2"),
    ("version true", {"version": True, "root": {"tensor": "a"}}, "unknown version True"),
    ("version 1.0", {"version": 1.0, "root": {"tensor": "a"}}, "unknown version 1.0"),
    ("root a string", {"version": 1, "root": "a"}, "expected a node object, got 'a'"),
    ("empty node", {"version": 1, "root": {}}, "expected a node object"),
    ("unknown node", {"version": 1, "root": {"set": []}}, "unknown node 'set'"),
    ("two kinds", {"version": 1, "root": {"list": [], "dict": []}}, "a container node has exactly one key"),
    ("list of a dict", {"version": 1, "root": {"list": {}}}, "a list node holds a list"),
    ("bad dict entry", {"version": 1, "root": {"dict": [["k"]]}}, r"a dict entry is a \[key, node\] pair"),
    ("float key", {"version": 1, "root": {"dict": [[1.5, {"tensor": "a"}]]}}, "dict keys are str or int, got 1.5"),
    ("null key", {"version": 1, "root": {"dict": [[None, {"tensor": "a"}]]}}, "dict keys are str or int, got None"),
    ("duplicate dict key", {"version": 1, "root": {"dict": [["k", {"tensor": "a"}], ["k", {"list": []}]]}},
     "duplicate dict key 'k'"),
    ("missing tensor", {"version": 1, "root": {"tensor": "b"}}, "no tensor named 'b' in the file"),
    ("tensor name not a str", {"version": 1, "root": {"tensor": 1}}, "no tensor named 1 in the file"),
    ("tensor used twice", {"version": 1, "root": {"list": [{"tensor": "a"}, {"tensor": "a"}]}}, "tensor 'a' is used twice"),
    ("unused tensor", {"version": 1, "root": {"list": []}}, "tensor 'a' is not part of the structure"),
    ("bad flag", {"version": 1, "root": {"tensor": "a", "requires_grad": 1}}, "must be true or false"),
    ("extra leaf key", {"version": 1, "root": {"tensor": "a", "x": True}}, "unexpected keys in a tensor node"),
    ("too deep", '{"version":1,"root":' + '{"list":[' * 300 + '{"tensor":"a"}' + "]}" * 300 + "}",
     "nested deeper than 200 levels"),
    ("hostile depth", '{"version":1,"root":' + "[" * 100_000, "not valid JSON"),
]


@pytest.mark.parametrize("structure,message", [c[1:] for c in BAD_STRUCTURES], ids=[c[0] for c in BAD_STRUCTURES])
def test_load_rejects_a_bad_structure(structure, message):
    with pytest.raises(RuntimeError, match=r"load: <file object>: invalid kiln.structure metadata: .*" + message):
        kiln.load(io.BytesIO(structure_file(structure)))


def test_load_rejects_requires_grad_on_an_int_tensor():
    data = reference_bytes({"i": np.array([1], dtype=np.int64)},
                           {"kiln.structure": json.dumps({"version": 1, "root": {"tensor": "i", "requires_grad": True}})})
    with pytest.raises(RuntimeError, match="cannot require grad"):
        kiln.load(io.BytesIO(data))


# ---- Module.state_dict round trip ----

def test_state_dict_round_trip(tmp_path):
    kiln.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = kiln.randn(5, 3)
    kiln.save_file(model.state_dict(), tmp_path / "model.safetensors", metadata={"format": "pt"})
    fresh = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    assert not kiln.equal(fresh(x), model(x))
    result = fresh.load_state_dict(kiln.load_file(tmp_path / "model.safetensors"))
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert kiln.equal(fresh(x), model(x))
    for (k, a), (k2, b) in zip(model.state_dict().items(), fresh.state_dict().items()):
        assert k == k2 and kiln.equal(a, b)
    # torch.save-style: the OrderedDict comes back with its order.
    kiln.save(model.state_dict(), tmp_path / "model.kiln")
    sd = kiln.load(tmp_path / "model.kiln")
    assert type(sd) is OrderedDict and list(sd) == list(model.state_dict())
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_load_state_dict_reports_a_mismatched_file(tmp_path):
    kiln.save_file({"0.weight": kiln.ones(4, 3)}, tmp_path / "partial.safetensors")
    model = nn.Sequential(nn.Linear(3, 4))
    with pytest.raises(RuntimeError, match=r"Missing key\(s\) in state_dict: \"0.bias\""):
        model.load_state_dict(kiln.load_file(tmp_path / "partial.safetensors"))


def test_pathlike_and_bytes_paths(tmp_path):
    p = pathlib.Path(tmp_path) / "p.safetensors"
    kiln.save_file({"a": kiln.ones(1)}, os.fsencode(str(p)))
    assert kiln.load_file(p)["a"].tolist() == [1.0]
    with pytest.raises(ValueError):
        kiln.load_file(str(p) + "\0x")
