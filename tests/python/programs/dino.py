"""facebookresearch/dino (main_dino.py DINOLoss / train_one_epoch, vision_transformer.py DINOHead / DropPath /
interpolate_pos_encoding, utils.py cosine_scheduler / clip_gradients / cancel_gradients_last_layer /
get_params_groups / MultiCropWrapper) in plain torch, one process: a tiny ViT student and teacher (teacher
.load_state_dict(student.state_dict()), requires_grad False), DINOHead with nn.utils.weight_norm(nn.Linear(...,
bias=False)) and self.last_layer.weight_g.data.fill_(1) / weight_g.requires_grad = False, trunc_normal_ init,
F.normalize(x, dim=-1, p=2), DropPath by x.new_empty(shape).bernoulli_(keep_prob) / torch.rand + floor_(),
MultiCropWrapper's torch.cumsum(torch.unique_consecutive(torch.tensor([inp.shape[-1] for inp in x]),
return_counts=True)[1], 0) grouping of global / local crops, interpolate_pos_encoding by
nn.functional.interpolate(mode='bicubic', scale_factor=...), DINOLoss with the registered center buffer updated
by an EMA of the teacher outputs, np.concatenate'd warmup-teacher-temperature schedule, student_out.chunk(ncrops),
torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1), cosine lr / wd / momentum schedules written into
param_groups (the no-weight-decay group by name.endswith(".bias") or len(param.shape) == 1), per-parameter
clip_gradients with p.grad.data.mul_(clip_coef), p.grad = None for the frozen last layer, AdamW, and the teacher
EMA by param_k.data.mul_(m).add_((1 - m) * param_q.detach().data) under torch.no_grad()."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.):
    return nn.init.trunc_normal_(tensor, mean, std, a, b)


def drop_path(x, drop_prob: float = 0., training: bool = False):
    if drop_prob == 0. or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
    random_tensor.floor_()
    output = x.div(keep_prob) * random_tensor
    return output


class DropPath(nn.Module):
    def __init__(self, drop_prob=None):
        super(DropPath, self).__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training)


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2, qkv_bias=False, qk_scale=None):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = qk_scale or head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        return x, attn


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=2., qkv_bias=False, drop_path=0.):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias)
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))

    def forward(self, x, return_attention=False):
        y, attn = self.attn(self.norm1(x))
        if return_attention:
            return attn
        x = x + self.drop_path(y)
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class VisionTransformer(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, embed_dim=24, depth=2, num_heads=2,
                 drop_path_rate=0.1):
        super().__init__()
        self.num_features = self.embed_dim = embed_dim
        self.patch_size = patch_size
        self.patch_embed = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        num_patches = (img_size // patch_size) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads, drop_path=dpr[i]) for i in range(depth)])
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = nn.Identity()
        trunc_normal_(self.pos_embed, std=.02)
        trunc_normal_(self.cls_token, std=.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight, std=.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def interpolate_pos_encoding(self, x, w, h):
        npatch = x.shape[1] - 1
        N = self.pos_embed.shape[1] - 1
        if npatch == N and w == h:
            return self.pos_embed
        class_pos_embed = self.pos_embed[:, 0]
        patch_pos_embed = self.pos_embed[:, 1:]
        dim = x.shape[-1]
        w0 = w // self.patch_size
        h0 = h // self.patch_size
        w0, h0 = w0 + 0.1, h0 + 0.1
        patch_pos_embed = nn.functional.interpolate(
            patch_pos_embed.reshape(1, int(math.sqrt(N)), int(math.sqrt(N)), dim).permute(0, 3, 1, 2),
            scale_factor=(w0 / math.sqrt(N), h0 / math.sqrt(N)),
            mode='bicubic',
        )
        assert int(w0) == patch_pos_embed.shape[-2] and int(h0) == patch_pos_embed.shape[-1]
        patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
        return torch.cat((class_pos_embed.unsqueeze(0), patch_pos_embed), dim=1)

    def prepare_tokens(self, x):
        B, nc, w, h = x.shape
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        cls_tokens = self.cls_token.expand(B, -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x = x + self.interpolate_pos_encoding(x, w, h)
        return x

    def forward(self, x):
        x = self.prepare_tokens(x)
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return x[:, 0]


class DINOHead(nn.Module):
    def __init__(self, in_dim, out_dim, use_bn=False, norm_last_layer=True, nlayers=3, hidden_dim=32,
                 bottleneck_dim=16):
        super().__init__()
        nlayers = max(nlayers, 1)
        layers = [nn.Linear(in_dim, hidden_dim)]
        if use_bn:
            layers.append(nn.BatchNorm1d(hidden_dim))
        layers.append(nn.GELU())
        for _ in range(nlayers - 2):
            layers.append(nn.Linear(hidden_dim, hidden_dim))
            if use_bn:
                layers.append(nn.BatchNorm1d(hidden_dim))
            layers.append(nn.GELU())
        layers.append(nn.Linear(hidden_dim, bottleneck_dim))
        self.mlp = nn.Sequential(*layers)
        self.apply(self._init_weights)
        self.last_layer = nn.utils.weight_norm(nn.Linear(bottleneck_dim, out_dim, bias=False))
        self.last_layer.weight_g.data.fill_(1)
        if norm_last_layer:
            self.last_layer.weight_g.requires_grad = False

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight, std=.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.mlp(x)
        x = nn.functional.normalize(x, dim=-1, p=2)
        x = self.last_layer(x)
        return x


class MultiCropWrapper(nn.Module):
    def __init__(self, backbone, head):
        super(MultiCropWrapper, self).__init__()
        backbone.fc, backbone.head = nn.Identity(), nn.Identity()
        self.backbone = backbone
        self.head = head

    def forward(self, x):
        if not isinstance(x, list):
            x = [x]
        idx_crops = torch.cumsum(torch.unique_consecutive(torch.tensor([inp.shape[-1] for inp in x]),
                                                          return_counts=True)[1], 0)
        start_idx, output = 0, torch.empty(0).to(x[0].device)
        for end_idx in idx_crops:
            _out = self.backbone(torch.cat(x[start_idx: end_idx]))
            if isinstance(_out, tuple):
                _out = _out[0]
            output = torch.cat((output, _out))
            start_idx = end_idx
        return self.head(output)


class DINOLoss(nn.Module):
    def __init__(self, out_dim, ncrops, warmup_teacher_temp, teacher_temp, warmup_teacher_temp_epochs, nepochs,
                 student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.student_temp = student_temp
        self.center_momentum = center_momentum
        self.ncrops = ncrops
        self.register_buffer("center", torch.zeros(1, out_dim))
        self.teacher_temp_schedule = np.concatenate((
            np.linspace(warmup_teacher_temp, teacher_temp, warmup_teacher_temp_epochs),
            np.ones(nepochs - warmup_teacher_temp_epochs) * teacher_temp
        ))

    def forward(self, student_output, teacher_output, epoch):
        student_out = student_output / self.student_temp
        student_out = student_out.chunk(self.ncrops)
        temp = self.teacher_temp_schedule[epoch]
        teacher_out = F.softmax((teacher_output - self.center) / temp, dim=-1)
        teacher_out = teacher_out.detach().chunk(2)
        total_loss = 0
        n_loss_terms = 0
        for iq, q in enumerate(teacher_out):
            for v in range(len(student_out)):
                if v == iq:
                    continue
                loss = torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1)
                total_loss += loss.mean()
                n_loss_terms += 1
        total_loss /= n_loss_terms
        self.update_center(teacher_output)
        return total_loss

    @torch.no_grad()
    def update_center(self, teacher_output):
        batch_center = torch.sum(teacher_output, dim=0, keepdim=True)
        batch_center = batch_center / (len(teacher_output))
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


def cosine_scheduler(base_value, final_value, epochs, niter_per_ep, warmup_epochs=0, start_warmup_value=0):
    warmup_schedule = np.array([])
    warmup_iters = warmup_epochs * niter_per_ep
    if warmup_epochs > 0:
        warmup_schedule = np.linspace(start_warmup_value, base_value, warmup_iters)
    iters = np.arange(epochs * niter_per_ep - warmup_iters)
    schedule = final_value + 0.5 * (base_value - final_value) * (1 + np.cos(np.pi * iters / len(iters)))
    schedule = np.concatenate((warmup_schedule, schedule))
    assert len(schedule) == epochs * niter_per_ep
    return schedule


def clip_gradients(model, clip):
    norms = []
    for name, p in model.named_parameters():
        if p.grad is not None:
            param_norm = p.grad.data.norm(2)
            norms.append(param_norm.item())
            clip_coef = clip / (param_norm + 1e-6)
            if clip_coef < 1:
                p.grad.data.mul_(clip_coef)
    return norms


def cancel_gradients_last_layer(epoch, model, freeze_last_layer):
    if epoch >= freeze_last_layer:
        return
    for n, p in model.named_parameters():
        if "last_layer" in n:
            p.grad = None


def get_params_groups(model):
    regularized = []
    not_regularized = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if name.endswith(".bias") or len(param.shape) == 1:
            not_regularized.append(param)
        else:
            regularized.append(param)
    return [{'params': regularized}, {'params': not_regularized, 'weight_decay': 0.}]


class DataAugmentationDINO(object):
    def __init__(self, local_crops_number):
        self.local_crops_number = local_crops_number

    def __call__(self, image):
        crops = []
        for flip in (False, True):
            x = image.flip(-1) if flip else image
            crops.append(x + 0.05 * torch.randn_like(x))
        for _ in range(self.local_crops_number):
            i, j = torch.randint(0, 9, (2,)).tolist()
            crops.append(image[:, i:i + 8, j:j + 8].clone())
        return crops


class Images(torch.utils.data.Dataset):
    def __init__(self, n, transform):
        g = torch.Generator().manual_seed(5)
        self.x = torch.rand(n, 3, 16, 16, generator=g)
        self.transform = transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.transform(self.x[i]), 0


def main(argv=None):
    parser = argparse.ArgumentParser('DINO')
    parser.add_argument('--out_dim', default=32, type=int)
    parser.add_argument('--norm_last_layer', default=1, type=int)
    parser.add_argument('--use_bn_in_head', action='store_true')
    parser.add_argument('--local_crops_number', type=int, default=2)
    parser.add_argument('--epochs', default=3, type=int)
    parser.add_argument('--freeze_last_layer', default=1, type=int)
    parser.add_argument('--clip_grad', type=float, default=0.3)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    np.random.seed(0)
    transform = DataAugmentationDINO(args.local_crops_number)
    data_loader = torch.utils.data.DataLoader(Images(16, transform), batch_size=4, shuffle=True, drop_last=True)
    student = MultiCropWrapper(VisionTransformer(drop_path_rate=0.1),
                               DINOHead(24, args.out_dim, use_bn=args.use_bn_in_head,
                                        norm_last_layer=bool(args.norm_last_layer)))
    teacher = MultiCropWrapper(VisionTransformer(), DINOHead(24, args.out_dim, args.use_bn_in_head))
    teacher.load_state_dict(student.state_dict())
    for p in teacher.parameters():
        p.requires_grad = False
    initial_state = {k: v.clone() for k, v in student.state_dict().items()}
    dino_loss = DINOLoss(args.out_dim, args.local_crops_number + 2, 0.04, 0.07, 2, args.epochs)
    optimizer = torch.optim.AdamW(get_params_groups(student))
    lr_schedule = cosine_scheduler(5e-4 * 4 / 256. * 8, 1e-6, args.epochs, len(data_loader), warmup_epochs=1)
    wd_schedule = cosine_scheduler(0.04, 0.4, args.epochs, len(data_loader))
    momentum_schedule = cosine_scheduler(0.996, 1, args.epochs, len(data_loader))
    step_losses, norms, centers = [], [], []
    for epoch in range(args.epochs):
        for it, (images, _) in enumerate(data_loader):
            it = len(data_loader) * epoch + it
            for i, param_group in enumerate(optimizer.param_groups):
                param_group["lr"] = lr_schedule[it]
                if i == 0:
                    param_group["weight_decay"] = wd_schedule[it]
            teacher_output = teacher(images[:2])
            student_output = student(images)
            loss = dino_loss(student_output, teacher_output, epoch)
            if not math.isfinite(loss.item()):
                raise SystemExit(1)
            optimizer.zero_grad()
            norms.append(clip_gradients(student, args.clip_grad))
            loss.backward()
            norms[-1] = clip_gradients(student, args.clip_grad)
            cancel_gradients_last_layer(epoch, student, args.freeze_last_layer)
            optimizer.step()
            with torch.no_grad():
                m = momentum_schedule[it]
                for param_q, param_k in zip(student.parameters(), teacher.parameters()):
                    param_k.data.mul_(m).add_((1 - m) * param_q.detach().data)
            step_losses.append(loss.item())
            centers.append(dino_loss.center.clone())
        log(epoch, loss.item())
    with torch.no_grad():
        teacher.eval()
        feats = teacher.backbone(images[0])
        attn = teacher.backbone.blocks[-1](teacher.backbone.prepare_tokens(images[0]), return_attention=True)
    return {"initial_state": initial_state, "step_losses": step_losses, "norms": norms, "centers": centers,
            "feats": feats, "attn": attn, "weight_g": student.head.last_layer.weight_g.detach().clone(),
            "names": [n for n, _ in student.head.last_layer.named_parameters()]}


if __name__ == "__main__":
    main()
