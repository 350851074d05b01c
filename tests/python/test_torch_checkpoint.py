"""kiln.save / kiln.load and torch's checkpoint format (the zip archive torch.save writes).

Interchange is checked against the installed torch in both directions (files torch.save
writes, loaded by kiln; files kiln.save writes, loaded by torch.load), and against committed
torch 2.x-layout fixtures built by fixtures/make_torch2_checkpoints.py. Hostile files are built
here with zipfile and raw pickle opcodes: each must raise a clean exception and, while
weights_only holds, run and import nothing.
"""
import importlib.util
import io
import os
import pathlib
import pickle
import random
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import kiln
from kiln import nn
from kiln.serialization import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
_spec = importlib.util.spec_from_file_location("make_torch2_checkpoints", FIXTURES / "make_torch2_checkpoints.py")
make = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make)

CLEAN_ERRORS = (RuntimeError, pickle.UnpicklingError, TypeError, ValueError)


@pytest.fixture(autouse=True)
def _no_leftover_safe_globals():
    clear_safe_globals()
    yield
    clear_safe_globals()


def torch_or_skip():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


def values(t):
    """A tensor's values as a Python list (floats widened exactly, so bfloat16/float16 compare bit for bit)."""
    return (t.float() if t.is_floating_point() else t).tolist()


def kiln_tensors():
    """One tensor of each kind the format has to carry, kiln side (the torch side mirrors it)."""
    w = kiln.arange(12, dtype=kiln.float32).reshape(3, 4) / 4
    return {
        "weight": w, "weight_t": w.t(), "row": w[2], "col": w[:, 1],
        "half": kiln.tensor([[1.0, -2.5], [65504.0, 2.0 ** -24]], dtype=kiln.float16),
        "bf16": kiln.tensor([1.0, -0.5, 2.0 ** 127 * 1.5, 2.0 ** -100], dtype=kiln.bfloat16),
        "double": kiln.tensor([3.141592653589793, -1e300], dtype=kiln.float64),
        "int": kiln.tensor([-(2 ** 31), 2 ** 31 - 1, 7], dtype=kiln.int32),
        "long": kiln.tensor(2 ** 62 + 1),
        "mask": kiln.tensor([True, False, True]),
        "empty": kiln.zeros(0, 3),
        "scalar": kiln.tensor(2.5),
    }


def torch_tensors(torch):
    w = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 4
    return {
        "weight": w, "weight_t": w.t(), "row": w[2], "col": w[:, 1],
        "half": torch.tensor([[1.0, -2.5], [65504.0, 2.0 ** -24]], dtype=torch.float16),
        "bf16": torch.tensor([1.0, -0.5, 2.0 ** 127 * 1.5, 2.0 ** -100], dtype=torch.bfloat16),
        "double": torch.tensor([3.141592653589793, -1e300], dtype=torch.float64),
        "int": torch.tensor([-(2 ** 31), 2 ** 31 - 1, 7], dtype=torch.int32),
        "long": torch.tensor(2 ** 62 + 1),
        "mask": torch.tensor([True, False, True]),
        "empty": torch.zeros(0, 3),
        "scalar": torch.tensor(2.5),
    }


def dtype_name(dtype):
    return str(dtype).split(".")[1]


def check_same(got, want):
    assert sorted(got) == sorted(want)
    for k in want:
        assert dtype_name(got[k].dtype) == dtype_name(want[k].dtype), k
        assert tuple(got[k].shape) == tuple(want[k].shape), k
        assert values(got[k]) == values(want[k]), k


# ---- torch -> kiln ----

def test_kiln_loads_tensors_torch_saved(tmp_path):
    torch = torch_or_skip()
    saved = torch_tensors(torch)
    torch.save(saved, tmp_path / "t.pt")
    for f in (tmp_path / "t.pt", str(tmp_path / "t.pt"), io.BytesIO((tmp_path / "t.pt").read_bytes())):
        back = kiln.load(f)
        check_same(back, saved)
    # views of one tensor come back as views of one storage, as in torch
    w = back["weight"]
    assert back["weight_t"].data_ptr() == w.data_ptr() and back["weight_t"].stride() == (1, 4)
    assert back["row"].data_ptr() == w.data_ptr() + 8 * 4 and back["row"].storage_offset() == 8
    assert back["col"].stride() == (4,) and not back["col"].is_contiguous()
    w.add_(1)
    assert back["row"].tolist() == [3.0, 3.25, 3.5, 3.75]


def test_kiln_loads_a_torch_model_state_dict_and_optimizer(tmp_path):
    torch = torch_or_skip()
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    topt = torch.optim.Adam(tmodel.parameters(), lr=0.01)
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    tmodel(torch.from_numpy(x)).sum().backward()
    topt.step()
    tmodel.eval()
    want = tmodel(torch.from_numpy(x)).detach().numpy()
    torch.save({"model": tmodel.state_dict(), "optimizer": topt.state_dict(), "epoch": 3, "loss": 0.5},
               tmp_path / "ckpt.pt")
    ckpt = kiln.load(tmp_path / "ckpt.pt", map_location="cpu")
    assert type(ckpt["model"]) is OrderedDict and ckpt["model"]._metadata == tmodel.state_dict()._metadata
    assert ckpt["model"]["1.num_batches_tracked"].dtype == kiln.int64 and ckpt["epoch"] == 3
    kmodel = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    kmodel.load_state_dict(ckpt["model"])
    kmodel.eval()
    np.testing.assert_allclose(kmodel(kiln.from_numpy(x)).detach().numpy(), want, rtol=1e-5, atol=1e-6)
    state = ckpt["optimizer"]["state"]
    assert sorted(state) == list(range(6)) and ckpt["optimizer"]["param_groups"][0]["lr"] == 0.01
    kopt = kiln.optim.Adam(kmodel.parameters(), lr=0.5)
    kopt.load_state_dict(ckpt["optimizer"])
    assert kopt.param_groups[0]["lr"] == 0.01


def test_kiln_loads_parameters_requires_grad_and_plain_values(tmp_path):
    torch = torch_or_skip()
    p = torch.nn.Parameter(torch.ones(2))
    obj = {"p": p, "same_p": p, "frozen": torch.nn.Parameter(torch.zeros(1), requires_grad=False),
           "g": torch.ones(2, requires_grad=True), "size": torch.Size([2, 3]), "dtype": torch.float16,
           "device": torch.device("cpu"), "bytes": b"\x00\xff", "set": {1, 2}, "tuple": (1, "a", None, 2.5),
           "nested": [{"deep": [torch.tensor([1])]}]}
    torch.save(obj, tmp_path / "p.pt")
    back = kiln.load(tmp_path / "p.pt")
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad and back["same_p"] is back["p"]
    assert isinstance(back["frozen"], nn.Parameter) and not back["frozen"].requires_grad
    assert back["g"].requires_grad and back["g"].is_leaf and type(back["g"]) is kiln.Tensor
    assert back["size"] == kiln.Size([2, 3]) and type(back["size"]) is kiln.Size
    assert back["dtype"] is kiln.float16 and back["device"] == kiln.device("cpu")
    assert (back["bytes"], back["set"], back["tuple"]) == (b"\x00\xff", {1, 2}, (1, "a", None, 2.5))
    assert back["nested"][0]["deep"][0].tolist() == [1]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_dtypes_kiln_lacks_raise_type_error_naming_them(tmp_path, dtype):
    torch = torch_or_skip()
    torch.save({"x": torch.zeros(2, dtype=getattr(torch, dtype))}, tmp_path / "u.pt")
    with pytest.raises(TypeError, match=f"dtype torch.{dtype}, which kiln does not support"):
        kiln.load(tmp_path / "u.pt")
    torch.save({"d": getattr(torch, dtype)}, tmp_path / "d.pt")
    with pytest.raises(TypeError, match=f"torch.{dtype}, which kiln does not support"):
        kiln.load(tmp_path / "d.pt")


def test_a_whole_torch_module_loads_as_the_kiln_module(tmp_path):
    torch = torch_or_skip()
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    torch.save(tmodel, tmp_path / "m.pt")
    x = np.ones((2, 3), np.float32)
    want = tmodel(torch.from_numpy(x)).detach().numpy()
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*GLOBAL "
                       r"torch.nn.modules.container.Sequential was not an allowed global.*add_safe_globals\("
                       r"\[kiln.nn.modules.container.Sequential\]\)"):
        kiln.load(tmp_path / "m.pt")
    for kmodel in (kiln.load(tmp_path / "m.pt", weights_only=False),):
        assert type(kmodel) is nn.Sequential and type(kmodel[0]) is nn.Linear
        np.testing.assert_allclose(kmodel(kiln.from_numpy(x)).detach().numpy(), want, rtol=1e-6)
    with safe_globals([nn.Sequential, nn.Linear, nn.ReLU]):
        kmodel = kiln.load(tmp_path / "m.pt")
    np.testing.assert_allclose(kmodel(kiln.from_numpy(x)).detach().numpy(), want, rtol=1e-6)


def test_legacy_files_load_and_torchscript_files_raise_a_clear_error(tmp_path):
    torch = torch_or_skip()
    # torch's legacy stream (_use_new_zipfile_serialization=False) loads (more in test_program_gaps9.py)
    torch.save({"a": torch.ones(1)}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    assert kiln.load(tmp_path / "legacy.pt")["a"].tolist() == [1.0]
    assert kiln.load(io.BytesIO((tmp_path / "legacy.pt").read_bytes()))["a"].tolist() == [1.0]
    torch.jit.save(torch.jit.script(torch.nn.ReLU()), str(tmp_path / "script.pt"))
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        kiln.load(tmp_path / "script.pt")


# ---- kiln -> torch ----

def test_torch_loads_tensors_kiln_saved(tmp_path):
    torch = torch_or_skip()
    saved = kiln_tensors()
    kiln.save(saved, tmp_path / "k.pt")
    buf = io.BytesIO()
    kiln.save(saved, buf)
    for f in (tmp_path / "k.pt", io.BytesIO(buf.getvalue())):
        for weights_only in (False, True):
            back = torch.load(f, weights_only=weights_only)
            if isinstance(f, io.BytesIO):
                f.seek(0)
            check_same(back, saved)
    w = back["weight"]
    assert back["weight_t"].storage().data_ptr() == w.storage().data_ptr() == back["col"].storage().data_ptr()
    assert back["row"].storage_offset() == 8 and back["col"].stride() == (4,)
    assert back["empty"].shape == (0, 3)


def test_torch_loads_a_kiln_state_dict_into_a_torch_model(tmp_path):
    torch = torch_or_skip()
    kiln.manual_seed(0)
    kmodel = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    kiln.save({"model": kmodel.state_dict(), "epoch": 3, "size": kiln.Size([1, 2]), "dtype": kiln.float32},
              tmp_path / "k.pt")
    ckpt = torch.load(tmp_path / "k.pt", weights_only=True)  # torch 1.13's allowlist: no floats, devices
    assert ckpt["epoch"] == 3 and ckpt["size"] == torch.Size([1, 2]) and ckpt["dtype"] is torch.float32
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    tmodel.load_state_dict(ckpt["model"])
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(tmodel(torch.from_numpy(x)).detach().numpy(),
                                  kmodel(kiln.from_numpy(x)).detach().numpy())


def test_torch_loads_kiln_parameters_optimizer_state_and_values(tmp_path):
    torch = torch_or_skip()
    kmodel = nn.Linear(3, 2)
    kopt = kiln.optim.Adam(kmodel.parameters(), lr=0.01)
    kmodel(kiln.ones(4, 3)).sum().backward()
    kopt.step()
    p = nn.Parameter(kiln.ones(2))
    obj = {"p": p, "again": p, "frozen": nn.Parameter(kiln.zeros(1), requires_grad=False),
           "g": kiln.ones(2, requires_grad=True), "optimizer": kopt.state_dict(), "device": kiln.device("cpu"),
           "dtype": kiln.bfloat16, "bytes": b"ab", "set": {3}, "inf": float("inf")}
    kiln.save(obj, tmp_path / "k.pt")
    back = torch.load(tmp_path / "k.pt")
    assert isinstance(back["p"], torch.nn.Parameter) and back["p"].requires_grad and back["again"] is back["p"]
    assert isinstance(back["frozen"], torch.nn.Parameter) and not back["frozen"].requires_grad
    assert back["g"].requires_grad and type(back["g"]) is torch.Tensor
    assert back["device"] == torch.device("cpu") and back["dtype"] is torch.bfloat16
    assert (back["bytes"], back["set"], back["inf"]) == (b"ab", {3}, float("inf"))
    tmodel = torch.nn.Linear(3, 2)
    topt = torch.optim.Adam(tmodel.parameters(), lr=0.5)
    topt.load_state_dict(back["optimizer"])
    assert topt.param_groups[0]["lr"] == 0.01
    assert topt.state_dict()["state"][0]["exp_avg"].tolist() == kopt.state_dict()["state"][0]["exp_avg"].tolist()


def test_kiln_files_have_torchs_layout(tmp_path):
    kiln.save({"a": kiln.ones(3), "b": kiln.ones(2, dtype=kiln.int64)}, tmp_path / "model.v1.pt")
    raw = (tmp_path / "model.v1.pt").read_bytes()
    with zipfile.ZipFile(tmp_path / "model.v1.pt") as zf:
        assert zf.namelist() == ["model.v1/data.pkl", "model.v1/byteorder", "model.v1/data/0", "model.v1/data/1",
                                 "model.v1/version"]
        assert zf.read("model.v1/byteorder") == b"little" and zf.read("model.v1/version") == b"3\n"
        assert zf.read("model.v1/data/1") == struct.pack("<2q", 1, 1)
        for info in zf.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename
        pkl = zf.read("model.v1/data.pkl")
    assert pkl[:2] == b"\x80\x02"  # protocol 2, as torch
    assert b"ctorch._utils\n_rebuild_tensor_v2\n" in pkl and b"ctorch\nFloatStorage\n" in pkl
    buf = io.BytesIO()
    kiln.save(kiln.ones(1), buf, _disable_byteorder_record=True)
    assert zipfile.ZipFile(buf).namelist() == ["archive/data.pkl", "archive/data/0", "archive/version"]


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_other_pickle_protocols(tmp_path, protocol):
    obj = {"w": kiln.ones(2, 2).t(), "p": nn.Parameter(kiln.zeros(1)), "b": b"xy", "s": {1}, "d": kiln.float16}
    kiln.save(obj, tmp_path / "p.pt", pickle_protocol=protocol)
    back = kiln.load(tmp_path / "p.pt")
    assert back["w"].tolist() == [[1.0, 1.0]] * 2 and isinstance(back["p"], nn.Parameter)
    assert (back["b"], back["s"], back["d"]) == (b"xy", {1}, kiln.float16)
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    assert torch.load(tmp_path / "p.pt")["w"].tolist() == [[1.0, 1.0]] * 2


def test_views_share_one_record_holding_only_what_they_reach(tmp_path):
    base = kiln.arange(100, dtype=kiln.float32)
    kiln.save({"a": base[10:20], "b": base[15:30:5]}, tmp_path / "v.pt")
    with zipfile.ZipFile(tmp_path / "v.pt") as zf:
        assert [n for n in zf.namelist() if "/data/" in n] == ["v/data/0"]
        assert zf.getinfo("v/data/0").file_size == 26 * 4  # elements 0..25: what the views reach
    back = kiln.load(tmp_path / "v.pt")
    assert back["a"].tolist() == list(range(10, 20)) and back["b"].tolist() == [15, 20, 25]
    assert back["b"].data_ptr() == back["a"].data_ptr() + 5 * 4


def test_tensors_from_numpy_views_that_start_at_one_address(tmp_path):
    a = np.arange(6, dtype=np.float32)
    short, long = kiln.from_numpy(a[:2]), kiln.from_numpy(a[:4])  # two storages, one start address
    kiln.save([short, long, kiln.zeros(0), kiln.zeros(0, dtype=kiln.int64)], tmp_path / "n.pt")
    back = kiln.load(tmp_path / "n.pt")
    assert [t.tolist() for t in back] == [[0.0, 1.0], [0.0, 1.0, 2.0, 3.0], [], []]
    assert back[3].dtype == kiln.int64


# ---- kiln -> kiln ----

def test_round_trip_every_kind_of_tensor(tmp_path):
    saved = kiln_tensors()
    kiln.save(saved, tmp_path / "k.pt")
    check_same(kiln.load(tmp_path / "k.pt"), saved)


def test_a_kiln_module_round_trips(tmp_path):
    kiln.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = kiln.ones(2, 3)
    kiln.save(model, tmp_path / "m.pt")
    with pytest.raises(pickle.UnpicklingError, match="kiln.nn.modules.container.Sequential"):
        kiln.load(tmp_path / "m.pt", weights_only=True)
    back = kiln.load(tmp_path / "m.pt", weights_only=False)
    assert kiln.equal(back(x), model(x)) and isinstance(back[0].weight, nn.Parameter)
    assert kiln.equal(kiln.load(tmp_path / "m.pt")(x), model(x))  # this process wrote it
    add_safe_globals([nn.Sequential, nn.Linear, nn.ReLU])
    back = kiln.load(tmp_path / "m.pt", weights_only=True)
    assert kiln.equal(back(x), model(x))
    assert back[0].weight.requires_grad and back[0].weight.is_leaf


def test_safe_globals_api():
    assert get_safe_globals() == []
    add_safe_globals([nn.Linear, (nn.ReLU, "my.ReLU")])
    add_safe_globals([nn.Linear])
    assert get_safe_globals() == [nn.Linear, (nn.ReLU, "my.ReLU")]
    with safe_globals([nn.Tanh]):
        assert nn.Tanh in get_safe_globals()
    assert nn.Tanh not in get_safe_globals()
    clear_safe_globals()
    assert get_safe_globals() == []
    with pytest.raises(ValueError, match="tuple of length 2"):
        add_safe_globals([(nn.ReLU,)])
    with pytest.raises(TypeError, match="second item in tuple to be str"):
        add_safe_globals([(nn.ReLU, 3)])
    with pytest.raises(TypeError):
        add_safe_globals([3])


def test_allowlisting_a_blocked_module_does_not_let_it_through(tmp_path):
    sentinel = tmp_path / "ran"
    path = zip_of(tmp_path, reduce_pickle("posix", "system", f"touch {sentinel}"))
    add_safe_globals([os.system])
    with pytest.raises(pickle.UnpicklingError, match="its module posix is blocked"):
        kiln.load(path)
    assert not sentinel.exists()


# ---- torch 2.x layout (committed fixtures) ----

def test_fixtures_are_what_the_script_writes(tmp_path):
    make.build(str(tmp_path))
    for name in make.FIXTURES:
        assert (tmp_path / name).read_bytes() == (FIXTURES / name).read_bytes(), name


def test_torch2_state_dict_fixture():
    sd = kiln.load(FIXTURES / "torch2_state_dict.pt")
    assert type(sd) is OrderedDict and sd._metadata == OrderedDict([("", {"version": 1}), ("bn", {"version": 2})])
    w = np.arange(12, dtype=np.float32) / 4
    assert sd["weight"].tolist() == w.reshape(3, 4).tolist() and sd["weight_t"].tolist() == w.reshape(3, 4).T.tolist()
    assert sd["row"].tolist() == w[8:].tolist() and sd["col"].tolist() == w[1::4].tolist()
    assert sd["weight_t"].data_ptr() == sd["weight"].data_ptr() == sd["row"].data_ptr() - 32
    assert values(sd["half"]) == [[1.0, -2.5], [65504.0, 2.0 ** -24]] and sd["half"].dtype == kiln.float16
    assert values(sd["bf16"]) == [1.0, -0.5, 2.0 ** 127 * 1.5, 2.0 ** -100] and sd["bf16"].dtype == kiln.bfloat16
    assert sd["double"].tolist() == [np.pi, -1e300] and sd["double"].requires_grad
    assert sd["int"].tolist() == [-(2 ** 31), 2 ** 31 - 1, 7] and sd["int"].dtype == kiln.int32
    assert sd["num_batches_tracked"].shape == () and sd["num_batches_tracked"].item() == 2 ** 62 + 1
    assert sd["mask"].tolist() == [True, False, True] and sd["empty"].shape == (0, 3)
    assert isinstance(sd["param"], nn.Parameter) and sd["param"].tolist() == [0.5, -0.25]


def test_torch2_checkpoint_fixture():
    ckpt = kiln.load(FIXTURES / "torch2_checkpoint.pt", weights_only=True)
    assert ckpt["model"]["layer.weight"].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert ckpt["optimizer"]["state"][0]["step"].item() == 3.0
    assert ckpt["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert ckpt["params"][0] is ckpt["params"][1] and isinstance(ckpt["params"][0], nn.Parameter)
    assert ckpt["params"][0].data_ptr() == ckpt["model"]["layer.weight"].data_ptr()
    assert (ckpt["epoch"], ckpt["loss"], ckpt["name"], ckpt["note"]) == (5, float("inf"), "run", None)
    assert ckpt["dtype"] is kiln.float16 and ckpt["shape"] == kiln.Size([2, 2]) and ckpt["device"] == kiln.device("cpu")  # a device never equals a str, as torch
    assert ckpt["blob"] == b"\x00\xffkiln" and ckpt["tags"] == {1, 2, 3}


def test_torch2_big_endian_fixture():
    d = kiln.load(FIXTURES / "torch2_big_endian.pt")
    assert d["f"].tolist() == np.array([1.5, -2.0, 1e-3], np.float32).tolist()
    assert d["q"].tolist() == [1, -2, 2 ** 40] and values(d["b"]) == [1.0, -3.0]


def test_map_location_for_a_file_saved_on_cuda():
    path = FIXTURES / "torch2_cuda.pt"
    with pytest.raises(RuntimeError, match=r"Attempting to deserialize object on a CUDA device but "
                                           r"torch.cuda.is_available\(\) is False"):
        kiln.load(path)
    with pytest.raises(RuntimeError, match="CUDA device"):
        kiln.load(path, map_location={"cuda:1": "cpu"})
    with pytest.raises(RuntimeError, match="don't know how to restore data location 'mps'"):
        kiln.load(path, map_location="mps")
    seen = []
    for loc in ("cpu", kiln.device("cpu"), {"cuda:0": "cpu"}, {"cuda:0": kiln.device("cpu")},
                lambda storage, location: seen.append(location) or storage):
        assert kiln.load(path, map_location=loc)["w"].tolist() == [1.0, 2.0]
    assert seen == ["cuda:0"]
    with pytest.raises(RuntimeError, match="CUDA device"):  # None from the callable: the saved location
        kiln.load(path, map_location=lambda storage, location: None)
    with pytest.raises(TypeError, match="map_location returned int"):
        kiln.load(path, map_location=lambda storage, location: 3)


def test_torch_reads_the_torch2_fixtures():
    torch = torch_or_skip()  # a check on the fixtures: they are valid torch checkpoints
    sd = torch.load(FIXTURES / "torch2_state_dict.pt")
    check_same(kiln.load(FIXTURES / "torch2_state_dict.pt"), sd)
    assert torch.load(FIXTURES / "torch2_checkpoint.pt")["blob"] == b"\x00\xffkiln"
    assert torch.load(FIXTURES / "torch2_cuda.pt", map_location="cpu")["w"].tolist() == [1.0, 2.0]


# ---- hostile files ----

def zip_of(tmp_path, data_pkl, records=None, stem="archive", name="bad.pt"):
    """A torch-layout archive around the given data.pkl bytes and data/<key> records."""
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{stem}/data.pkl", data_pkl)
        for key, payload in (records or {}).items():
            zf.writestr(f"{stem}/{key}", payload)
        zf.writestr(f"{stem}/version", b"3\n")
    return path


def reduce_pickle(module, name, arg):
    """GLOBAL module.name, called with one str argument (REDUCE): what a malicious pickle does."""
    args = pickle.dumps((arg,), protocol=2)[2:-1]  # without PROTO and STOP
    return b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n" + args + b"R."


def hostile_pickles(sentinel):
    cmd = f"touch {sentinel}"
    return {
        "os.system": reduce_pickle("os", "system", cmd),
        "posix.system": reduce_pickle("posix", "system", cmd),
        "builtins.eval": reduce_pickle("builtins", "eval", f"__import__('os').system('{cmd}')"),
        "__builtin__.exec": reduce_pickle("__builtin__", "exec", f"import os; os.system('{cmd}')"),
        "subprocess": reduce_pickle("subprocess", "getoutput", cmd),
        "getattr": reduce_pickle("builtins", "getattr", "x"),
        "importlib": reduce_pickle("importlib", "import_module", "antigravity"),
        "a module never imported": reduce_pickle("antigravity", "fly", "x"),
        "stack global": b"\x80\x04\x8c\x02os\x8c\x06system\x93" + pickle.dumps((cmd,), 4)[2:-1] + b"R.",
        "INST opcode": b"(S'" + cmd.encode() + b"'\nios\nsystem\n.",
        "OBJ opcode": b"\x80\x02(cos\nsystem\nX" + struct.pack("<I", len(cmd)) + cmd.encode() + b"o.",
        "EXT1 opcode": b"\x80\x02\x82\x01.",
        "torch name of os.system": reduce_pickle("torch.os", "system", cmd),
        "reduce of an allowed type": b"\x80\x02ccollections\nOrderedDict\n)\x81.",  # NEWOBJ of OrderedDict
        "text persistent id": b"Pstorage\n.",
        "module persistent id": b"\x80\x02X\x06\x00\x00\x00module\x85Q.",
        "rebuild without a storage": b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(K\x00K\x00)))\x89tR.",
        "bytearray of a huge int": b"\x80\x02c__builtin__\nbytearray\n\x8a\x06\x00\x00\x00\x00\x00\x01\x85R.",
        "append to a tensor-like": b"\x80\x02ccollections\nOrderedDict\n)RK\x01a.",
        "setitem on a set": b"\x80\x02c__builtin__\nset\n])RK\x01K\x02s.",
        "truncated": b"\x80\x02}q\x00(X\x01\x00\x00\x00a",
        "unknown opcode": b"\x80\x02\xff.",
        "bad memo": b"\x80\x02h\x05.",
        "empty stack": b"\x80\x02R.",
    }


@pytest.mark.parametrize("case", list(hostile_pickles("x")))
def test_hostile_pickles_run_nothing_under_weights_only(tmp_path, case):
    sentinel = tmp_path / "ran"
    path = zip_of(tmp_path, hostile_pickles(sentinel)[case])
    before = set(sys.modules)
    # a pickle that ends early is EOFError, as torch 2.x's weights-only unpickler raises it
    with pytest.raises(EOFError if case == "truncated" else pickle.UnpicklingError) as info:
        kiln.load(path)
    if case != "truncated":
        assert "Weights only load failed" in str(info.value)
    assert not sentinel.exists()
    assert set(sys.modules) == before  # nothing named in the file was imported


def test_the_refusal_message_names_the_global_and_add_safe_globals(tmp_path):
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported global: GLOBAL os.system was not an allowed "
                       r"global, and its module os is blocked: not even add_safe_globals can allow it"):
        kiln.load(zip_of(tmp_path, reduce_pickle("os", "system", "true")))
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported global: GLOBAL pathlib.Path was not an allowed "
                       r"global by default. Please use `kiln.serialization.add_safe_globals\(\[pathlib.Path\]\)` "
                       r"or the `kiln.serialization.safe_globals\(\[pathlib.Path\]\)` context manager"):
        kiln.load(zip_of(tmp_path, reduce_pickle("pathlib", "Path", "/x"), name="p.pt"))
    with safe_globals([pathlib.Path]):
        assert kiln.load(tmp_path / "p.pt") == pathlib.Path("/x")


def tensor_file(tmp_path, offset=0, size=(2,), stride=(1,), numel=None, storage_type="FloatStorage",
                requires_grad=False, array=None, drop_record=False, extra_records=None):
    """A checkpoint of one tensor, with the given (possibly wrong) metadata."""
    array = np.arange(4, dtype=np.float32) if array is None else array
    storage = make.Storage("0", storage_type, array, numel=numel)
    data = io.BytesIO()
    make.Pickler(data, 2).dump({"t": make.Tensor(storage, offset, size, stride, requires_grad)})
    records = {} if drop_record else {"data/0": array.tobytes()}
    records.update(extra_records or {})
    return zip_of(tmp_path, data.getvalue(), records)


BAD_TENSORS = [
    ("offset past the end", dict(offset=3), RuntimeError, "out of bounds for storage of 4 elements"),
    ("size past the end", dict(size=(5,)), RuntimeError, "out of bounds"),
    ("stride past the end", dict(size=(2,), stride=(4,)), RuntimeError, "out of bounds"),
    ("negative size", dict(size=(-1,)), RuntimeError, "invalid tensor size: -1"),
    ("negative stride", dict(stride=(-1,)), RuntimeError, "invalid tensor stride: -1"),
    ("negative offset", dict(offset=-1), RuntimeError, "invalid tensor storage offset: -1"),
    ("int64 overflow of numel", dict(size=(2 ** 62, 2 ** 62), stride=(0, 0)), RuntimeError, "too many elements"),
    ("stride beyond int64", dict(stride=(2 ** 63,)), RuntimeError, "invalid tensor stride"),
    ("float size", dict(size=(2.0,)), RuntimeError, "invalid tensor size: 2.0"),
    ("bool size", dict(size=(True,)), RuntimeError, "invalid tensor size: True"),
    ("sizes and strides differ", dict(size=(2, 1), stride=(1,)), RuntimeError, "2 sizes but 1 strides"),
    ("65 dims", dict(size=(1,) * 65, stride=(1,) * 65), RuntimeError, "at most 64 ints"),
    ("numel larger than the record", dict(numel=1000), RuntimeError, "has 16 bytes but its storage of 1000"),
    ("numel smaller than the record", dict(numel=1), RuntimeError, "has 16 bytes but its storage of 1"),
    ("huge numel", dict(numel=2 ** 60), RuntimeError, "needs"),
    ("negative numel", dict(numel=-4), pickle.UnpicklingError, "invalid storage persistent id"),
    ("missing record", dict(drop_record=True), RuntimeError, "has no record 'archive/data/0'"),
    ("int tensor requiring grad", dict(array=np.arange(4, dtype=np.int64), storage_type="LongStorage",
                                       requires_grad=True), RuntimeError, "floating point"),
    ("complex storage", dict(array=np.zeros(4, np.complex64), storage_type="ComplexFloatStorage"), TypeError,
     "dtype torch.complex64, which kiln does not support"),
    ("bad byteorder", dict(extra_records={"byteorder": b"middle"}), ValueError, "Unknown endianness type: middle"),
]


@pytest.mark.parametrize("kwargs,exc,message", [c[1:] for c in BAD_TENSORS], ids=[c[0] for c in BAD_TENSORS])
def test_bad_tensor_metadata_raises_cleanly(tmp_path, kwargs, exc, message):
    path = tensor_file(tmp_path, **kwargs)
    for weights_only in (True, False):
        with pytest.raises(exc, match=message):
            kiln.load(path, weights_only=weights_only)


def test_broken_archives_raise_runtime_error(tmp_path):
    good = tensor_file(tmp_path).read_bytes()
    cases = {
        "not a zip after the magic": b"PK\x03\x04" + b"\x00" * 40,
        "empty zip": b"PK\x05\x06" + b"\x00" * 18,
    }
    two = io.BytesIO()
    with zipfile.ZipFile(two, "w") as zf:
        zf.writestr("a/data.pkl", b"\x80\x02N.")
        zf.writestr("b/version", b"3\n")
    cases["two top-level directories"] = two.getvalue()
    flat = io.BytesIO()
    with zipfile.ZipFile(flat, "w") as zf:
        zf.writestr("data.pkl", b"\x80\x02N.")
    cases["no directory"] = flat.getvalue()
    nopkl = io.BytesIO()
    with zipfile.ZipFile(nopkl, "w") as zf:
        zf.writestr("a/version", b"3\n")
    cases["no data.pkl"] = nopkl.getvalue()
    for what, data in cases.items():
        with pytest.raises(RuntimeError, match="load: <file object>: "):
            kiln.load(io.BytesIO(data))
    # every truncation of a valid file
    for n in range(4, len(good)):
        with pytest.raises(CLEAN_ERRORS):
            kiln.load(io.BytesIO(good[:n]))


def test_random_byte_flips_raise_cleanly_or_load(tmp_path):
    kiln.save({"w": kiln.arange(6, dtype=kiln.float32).reshape(2, 3), "p": nn.Parameter(kiln.ones(2)), "n": 3,
               "s": "text", "l": [1.5, None]}, tmp_path / "k.pt")
    good = (tmp_path / "k.pt").read_bytes()
    rng = random.Random(0)
    outcomes = {}
    for _ in range(1500):
        bad = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            bad[rng.randrange(len(bad))] ^= rng.randint(1, 255)
        try:
            kiln.load(io.BytesIO(bytes(bad)))
            kind = "loaded"
        except CLEAN_ERRORS as e:
            kind = type(e).__name__
        outcomes[kind] = outcomes.get(kind, 0) + 1
    assert outcomes.get("loaded", 0) > 0 and outcomes.get("RuntimeError", 0) > 0, outcomes


def test_deep_nesting_loads_without_recursion(tmp_path):
    depth = 100_000
    data = b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b"."
    path = zip_of(tmp_path, data)
    for weights_only in (True, False):
        out = kiln.load(path, weights_only=weights_only)
        for _ in range(10):
            assert type(out) is list and len(out) == 1
            out = out[0]


def test_weights_only_false_maps_torch_names_and_reports_missing_ones(tmp_path):
    data = b"\x80\x02ctorch.nn.modules.linear\nNoSuchLayer\n."
    with pytest.raises(pickle.UnpicklingError, match="kiln has no kiln.nn.modules.linear.NoSuchLayer"):
        kiln.load(zip_of(tmp_path, data), weights_only=False)
    data = b"\x80\x02ctorch.nn.modules.linear\nLinear\n."
    assert kiln.load(zip_of(tmp_path, data, name="ok.pt"), weights_only=False) is nn.Linear


def test_load_arguments_as_torch():
    buf = io.BytesIO()
    kiln.save([kiln.ones(1)], buf)
    buf.seek(0)
    assert kiln.load(buf, None, pickle, weights_only=False)[0].tolist() == [1.0]
    buf.seek(0)
    assert kiln.load(buf, weights_only=None, mmap=False, encoding="utf-8")[0].tolist() == [1.0]
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module"):
        kiln.load(buf, pickle_module=object())
    legacy = io.BytesIO()
    kiln.save({"x": kiln.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    legacy.seek(0)
    assert kiln.load(legacy)["x"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="pickle_module must be the pickle module"):
        kiln.save({}, io.BytesIO(), pickle_module=object())
