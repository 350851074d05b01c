"""Small torch 2.x surfaces real scripts touch, each against torch (or torch's documented formula where
torch 1.13, the oracle installed here, predates it): padding modules, get_total_norm /
clip_grads_with_norm_, torch.utils.hooks.RemovableHandle, torch.multiprocessing at the top level."""
from collections import OrderedDict

import pytest
import torch

import kiln


def same_input(shape):
    t = torch.arange(float(torch.tensor(shape).prod())).reshape(shape)
    return kiln.tensor(t.tolist()), t


@pytest.mark.parametrize("name,n,mode", [("ZeroPad1d", 1, "constant"), ("ZeroPad2d", 2, "constant"),
                                         ("ZeroPad3d", 3, "constant"), ("CircularPad1d", 1, "circular"),
                                         ("CircularPad2d", 2, "circular"), ("CircularPad3d", 3, "circular")])
@pytest.mark.parametrize("padding", [1, "tuple"])
def test_padding_modules_are_torchs_pad(name, n, mode, padding):
    shape = (1, 2) + (3,) * n
    k, t = same_input(shape)
    pad = 1 if padding == 1 else tuple(range(1, 2 * n + 1)) if mode == "constant" else (1, 2) * n
    module = getattr(kiln.nn, name)(pad)
    sides = (pad,) * (2 * n) if isinstance(pad, int) else pad
    expected = torch.nn.functional.pad(t, sides, mode)
    got = module(k)
    assert got.shape == tuple(expected.shape) and got.tolist() == expected.tolist()
    assert module.padding == sides
    k.requires_grad_(True)
    module(k).sum().backward()
    t.requires_grad_(True)
    torch.nn.functional.pad(t, sides, mode).sum().backward()
    assert k.grad.tolist() == t.grad.tolist()


def test_get_total_norm_and_clip_grads_with_norm_match_clip_grad_norm():
    for norm_type in (2.0, 1.0, float("inf"), 3):
        tp = [torch.nn.Parameter(torch.tensor([[3.0, -4.0], [1.0, 2.0]])), torch.nn.Parameter(torch.tensor([12.0, -1.0]))]
        kp = [kiln.nn.Parameter(kiln.tensor(p.tolist())) for p in tp]
        for p in tp + kp:
            p.grad = p.detach() * 2
        expected = torch.nn.utils.clip_grad_norm_(tp, 5.0, norm_type)
        total = kiln.nn.utils.get_total_norm([p.grad for p in kp], norm_type)
        assert total.item() == pytest.approx(expected.item(), rel=1e-6)
        kiln.nn.utils.clip_grads_with_norm_(kp, 5.0, total)
        for a, b in zip(kp, tp):
            assert a.grad.reshape(-1).tolist() == pytest.approx(b.grad.reshape(-1).tolist(), rel=1e-6)
    assert kiln.nn.utils.get_total_norm([]).item() == 0.0
    bad = kiln.tensor([float("nan")])
    with pytest.raises(RuntimeError, match="non-finite"):
        kiln.nn.utils.get_total_norm([bad], error_if_nonfinite=True)


def test_removable_handle_is_torchs_class():
    for lib in (kiln, torch):
        hooks, extra = OrderedDict(), OrderedDict()  # held weakly: a plain dict cannot be (in torch either)
        h = lib.utils.hooks.RemovableHandle(hooks)
        hooks[h.id] = "hook"
        if lib is kiln:  # torch 2.x's extra_dict (1.13 has none)
            h = lib.utils.hooks.RemovableHandle(hooks, extra_dict=extra)
            hooks[h.id] = "hook"
            extra[h.id] = "extra"
        h2 = lib.utils.hooks.RemovableHandle(hooks)
        assert h2.id != h.id
        h.remove()
        assert h.id not in hooks and h.id not in extra
        with lib.utils.hooks.RemovableHandle(hooks) as h3:
            hooks[h3.id] = 1
        assert h3.id not in hooks
    handle = kiln.nn.Linear(1, 1).register_forward_hook(lambda *a: None)
    assert isinstance(handle, kiln.utils.hooks.RemovableHandle)


def test_multiprocessing_is_a_top_level_attribute():
    assert kiln.multiprocessing.get_sharing_strategy() == "file_descriptor"
    assert callable(kiln.multiprocessing.spawn)
