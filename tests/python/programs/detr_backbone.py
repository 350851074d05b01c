"""facebookresearch/detr's models/backbone.py and position_encoding.py as written (torchvision's ResNet replaced by
a small one): FrozenBatchNorm2d (buffers only, the _load_from_state_dict override that drops num_batches_tracked,
a forward by reshape / rsqrt with eps = 1e-5 moved out of the reshapes), BackboneBase freezing parameters by
name (parameter.requires_grad_(False) unless 'layer2' / 'layer3' / 'layer4' is in the name), an
IntermediateLayerGetter-style return_layers dict, NestedTensor with masks resized by
F.interpolate(m[None].float(), size=x.shape[-2:]).to(torch.bool)[0], nested_tensor_from_tensor_list padding,
PositionEmbeddingSine (cumsum of ~mask with normalize and scale 2 * pi, dim_t = temperature ** (2 * (dim_t // 2) /
num_pos_feats) with torch.div(..., rounding_mode='floor'), torch.stack((pos_x[..., 0::2].sin(), pos_x[..., 1::2].cos()),
dim=4).flatten(3)), PositionEmbeddingLearned (row / col nn.Embedding with uniform_ init, repeat'ed); the frozen
backbone is loaded from a BatchNorm2d network's state_dict (the ImageNet-weights case) and a small head is trained on
the masked, position-encoded features with AdamW and separate backbone / head learning rates (param_dicts)."""
import argparse
import math
from collections import OrderedDict
from typing import List, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class FrozenBatchNorm2d(torch.nn.Module):
    def __init__(self, n):
        super(FrozenBatchNorm2d, self).__init__()
        self.register_buffer("weight", torch.ones(n))
        self.register_buffer("bias", torch.zeros(n))
        self.register_buffer("running_mean", torch.zeros(n))
        self.register_buffer("running_var", torch.ones(n))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        num_batches_tracked_key = prefix + 'num_batches_tracked'
        if num_batches_tracked_key in state_dict:
            del state_dict[num_batches_tracked_key]
        super(FrozenBatchNorm2d, self)._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                                             missing_keys, unexpected_keys, error_msgs)

    def forward(self, x):
        w = self.weight.reshape(1, -1, 1, 1)
        b = self.bias.reshape(1, -1, 1, 1)
        rv = self.running_var.reshape(1, -1, 1, 1)
        rm = self.running_mean.reshape(1, -1, 1, 1)
        eps = 1e-5
        scale = w * (rv + eps).rsqrt()
        bias = b - rm * scale
        return x * scale + bias


class NestedTensor(object):
    def __init__(self, tensors, mask: Optional[Tensor]):
        self.tensors = tensors
        self.mask = mask

    def decompose(self):
        return self.tensors, self.mask


def nested_tensor_from_tensor_list(tensor_list: List[Tensor]):
    max_size = [max(s) for s in zip(*[list(img.shape) for img in tensor_list])]
    batch_shape = [len(tensor_list)] + max_size
    b, c, h, w = batch_shape
    dtype = tensor_list[0].dtype
    tensor = torch.zeros(batch_shape, dtype=dtype)
    mask = torch.ones((b, h, w), dtype=torch.bool)
    for img, pad_img, m in zip(tensor_list, tensor, mask):
        pad_img[: img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)
        m[: img.shape[1], :img.shape[2]] = False
    return NestedTensor(tensor, mask)


def make_resnet(norm_layer):
    def block(cin, cout, stride):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), norm_layer(cout), nn.ReLU(inplace=True))
    return nn.Sequential(OrderedDict([
        ("conv1", nn.Conv2d(3, 8, 3, 1, 1, bias=False)), ("bn1", norm_layer(8)), ("relu", nn.ReLU(inplace=True)),
        ("layer1", block(8, 8, 1)), ("layer2", block(8, 16, 2)), ("layer3", block(16, 16, 1)),
        ("layer4", block(16, 32, 2))]))


class IntermediateLayerGetter(nn.ModuleDict):
    def __init__(self, model, return_layers):
        orig_return_layers = return_layers
        return_layers = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            if name in return_layers:
                del return_layers[name]
            if not return_layers:
                break
        super().__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


class BackboneBase(nn.Module):
    def __init__(self, backbone: nn.Module, train_backbone: bool, num_channels: int, return_interm_layers: bool):
        super().__init__()
        for name, parameter in backbone.named_parameters():
            if not train_backbone or 'layer2' not in name and 'layer3' not in name and 'layer4' not in name:
                parameter.requires_grad_(False)
        if return_interm_layers:
            return_layers = {"layer1": "0", "layer2": "1", "layer3": "2", "layer4": "3"}
        else:
            return_layers = {'layer4': "0"}
        self.body = IntermediateLayerGetter(backbone, return_layers=return_layers)
        self.num_channels = num_channels

    def forward(self, tensor_list: NestedTensor):
        xs = self.body(tensor_list.tensors)
        out = {}
        for name, x in xs.items():
            m = tensor_list.mask
            assert m is not None
            mask = F.interpolate(m[None].float(), size=x.shape[-2:]).to(torch.bool)[0]
            out[name] = NestedTensor(x, mask)
        return out


class PositionEmbeddingSine(nn.Module):
    def __init__(self, num_pos_feats=64, temperature=10000, normalize=False, scale=None):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        if scale is not None and normalize is False:
            raise ValueError("normalize should be True if scale is passed")
        if scale is None:
            scale = 2 * math.pi
        self.scale = scale

    def forward(self, tensor_list: NestedTensor):
        x = tensor_list.tensors
        mask = tensor_list.mask
        assert mask is not None
        not_mask = ~mask
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        if self.normalize:
            eps = 1e-6
            y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
            x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=x.device)
        dim_t = self.temperature ** (2 * torch.div(dim_t, 2, rounding_mode='floor') / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
        return pos


class PositionEmbeddingLearned(nn.Module):
    def __init__(self, num_pos_feats=256):
        super().__init__()
        self.row_embed = nn.Embedding(50, num_pos_feats)
        self.col_embed = nn.Embedding(50, num_pos_feats)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.uniform_(self.row_embed.weight)
        nn.init.uniform_(self.col_embed.weight)

    def forward(self, tensor_list: NestedTensor):
        x = tensor_list.tensors
        h, w = x.shape[-2:]
        i = torch.arange(w, device=x.device)
        j = torch.arange(h, device=x.device)
        x_emb = self.col_embed(i)
        y_emb = self.row_embed(j)
        pos = torch.cat([
            x_emb.unsqueeze(0).repeat(h, 1, 1),
            y_emb.unsqueeze(1).repeat(1, w, 1),
        ], dim=-1).permute(2, 0, 1).unsqueeze(0).repeat(x.shape[0], 1, 1, 1)
        return pos


class Detector(nn.Module):
    def __init__(self, backbone, position, num_classes=5):
        super().__init__()
        self.backbone = backbone
        self.position = position
        self.input_proj = nn.Conv2d(32, 16, kernel_size=1)
        self.class_embed = nn.Linear(16, num_classes)

    def forward(self, samples: NestedTensor):
        features = self.backbone(samples)
        src, mask = features["0"].decompose()
        pos = self.position(features["0"]).to(src.dtype)
        h = self.input_proj(src) + pos
        keep = (~mask).unsqueeze(1).float()
        pooled = (h * keep).sum((2, 3)) / keep.sum((2, 3)).clamp(min=1)
        return self.class_embed(pooled)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--position_embedding", default="sine", choices=["sine", "learned"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--lr_backbone", type=float, default=1e-4)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(42)
    # "pretrained" weights: a BatchNorm2d network after a few training-mode forwards
    pretrained = make_resnet(nn.BatchNorm2d)
    with torch.no_grad():
        for _ in range(3):
            pretrained(torch.randn(4, 3, 16, 16))
    frozen = make_resnet(FrozenBatchNorm2d)
    load_result = frozen.load_state_dict(pretrained.state_dict())
    backbone = BackboneBase(frozen, train_backbone=args.lr_backbone > 0, num_channels=32, return_interm_layers=False)
    N_steps = 16 // 2
    position = (PositionEmbeddingSine(N_steps, normalize=True) if args.position_embedding == "sine"
                else PositionEmbeddingLearned(N_steps))
    model = Detector(backbone, position)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    param_dicts = [
        {"params": [p for n, p in model.named_parameters() if "backbone" not in n and p.requires_grad]},
        {"params": [p for n, p in model.named_parameters() if "backbone" in n and p.requires_grad],
         "lr": args.lr_backbone},
    ]
    optimizer = torch.optim.AdamW(param_dicts, lr=1e-3, weight_decay=1e-4)
    lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 5)
    step_losses = []
    for step in range(args.steps):
        imgs = [torch.randn(3, 12 + (i % 3) * 2, 16 - (i % 2) * 3) for i in range(4)]
        targets = torch.tensor([(step + i) % 5 for i in range(4)])
        samples = nested_tensor_from_tensor_list(imgs)
        logits = model(samples)
        loss = F.cross_entropy(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        lr_scheduler.step()
        step_losses.append(loss.item())
        log(f"step {step} loss {loss.item():.4f}")
    samples = nested_tensor_from_tensor_list([torch.ones(3, 10, 12), torch.ones(3, 16, 8)])
    features = model.backbone(samples)
    pos = model.position(features["0"])
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    return {"initial_state": initial_state, "step_losses": step_losses, "load_result": str(load_result),
            "trainable": trainable, "pos": pos.detach(), "mask": features["0"].mask,
            "frozen_mean": frozen.bn1.running_mean.clone()}


if __name__ == "__main__":
    main()
