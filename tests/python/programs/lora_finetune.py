"""microsoft/LoRA's loralib as written (layers.py / utils.py): LoRALayer's fields, lora.Embedding (lora_A / lora_B
of self.weight.new_zeros, F.embedding of lora_A.transpose(0, 1) with the layer's padding_idx / max_norm / ...),
lora.Linear (fan_in_fan_out transposes, kaiming_uniform_(a=math.sqrt(5)) on lora_A, zeros_ on lora_B, the frozen
pretrained weight, lora_dropout, train(mode) that merges weight.data += (B @ A) * scaling when switched to eval and
unmerges when switched back), lora.MergedLinear (enable_lora's boolean lora_ind built by
weight.new_zeros(..., dtype=torch.bool).view(len(enable_lora), -1), zero_pad by result[self.lora_ind] = x,
merge_AB by F.conv1d(lora_A.unsqueeze(0), lora_B.unsqueeze(-1), groups=sum(enable_lora))),
mark_only_lora_as_trainable(bias='lora_only') and lora_state_dict; a small GPT-style block model is first trained,
then its pretrained state_dict is loaded with strict=False into the LoRA model and only the LoRA parameters are
fine-tuned with AdamW; eval outputs (merged) must equal train-mode outputs (unmerged)."""
import argparse
import math
from typing import Dict, List

import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRALayer():
    def __init__(self, r: int, lora_alpha: int, lora_dropout: float, merge_weights: bool):
        self.r = r
        self.lora_alpha = lora_alpha
        if lora_dropout > 0.:
            self.lora_dropout = nn.Dropout(p=lora_dropout)
        else:
            self.lora_dropout = lambda x: x
        self.merged = False
        self.merge_weights = merge_weights


class Embedding(nn.Embedding, LoRALayer):
    def __init__(self, num_embeddings: int, embedding_dim: int, r: int = 0, lora_alpha: int = 1,
                 merge_weights: bool = True, **kwargs):
        nn.Embedding.__init__(self, num_embeddings, embedding_dim, **kwargs)
        LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=0, merge_weights=merge_weights)
        if r > 0:
            self.lora_A = nn.Parameter(self.weight.new_zeros((r, num_embeddings)))
            self.lora_B = nn.Parameter(self.weight.new_zeros((embedding_dim, r)))
            self.scaling = self.lora_alpha / self.r
            self.weight.requires_grad = False
        self.reset_parameters()

    def reset_parameters(self):
        nn.Embedding.reset_parameters(self)
        if hasattr(self, 'lora_A'):
            nn.init.zeros_(self.lora_A)
            nn.init.normal_(self.lora_B)

    def train(self, mode: bool = True):
        nn.Embedding.train(self, mode)
        if mode:
            if self.merge_weights and self.merged:
                if self.r > 0:
                    self.weight.data -= (self.lora_B @ self.lora_A).transpose(0, 1) * self.scaling
                self.merged = False
        else:
            if self.merge_weights and not self.merged:
                if self.r > 0:
                    self.weight.data += (self.lora_B @ self.lora_A).transpose(0, 1) * self.scaling
                self.merged = True

    def forward(self, x: torch.Tensor):
        if self.r > 0 and not self.merged:
            result = nn.Embedding.forward(self, x)
            after_A = F.embedding(x, self.lora_A.transpose(0, 1), self.padding_idx, self.max_norm,
                                  self.norm_type, self.scale_grad_by_freq, self.sparse)
            result += (after_A @ self.lora_B.transpose(0, 1)) * self.scaling
            return result
        else:
            return nn.Embedding.forward(self, x)


class Linear(nn.Linear, LoRALayer):
    def __init__(self, in_features: int, out_features: int, r: int = 0, lora_alpha: int = 1,
                 lora_dropout: float = 0., fan_in_fan_out: bool = False, merge_weights: bool = True, **kwargs):
        nn.Linear.__init__(self, in_features, out_features, **kwargs)
        LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout, merge_weights=merge_weights)
        self.fan_in_fan_out = fan_in_fan_out
        if r > 0:
            self.lora_A = nn.Parameter(self.weight.new_zeros((r, in_features)))
            self.lora_B = nn.Parameter(self.weight.new_zeros((out_features, r)))
            self.scaling = self.lora_alpha / self.r
            self.weight.requires_grad = False
        self.reset_parameters()
        if fan_in_fan_out:
            self.weight.data = self.weight.data.transpose(0, 1)

    def reset_parameters(self):
        nn.Linear.reset_parameters(self)
        if hasattr(self, 'lora_A'):
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            nn.init.zeros_(self.lora_B)

    def train(self, mode: bool = True):
        def T(w):
            return w.transpose(0, 1) if self.fan_in_fan_out else w
        nn.Linear.train(self, mode)
        if mode:
            if self.merge_weights and self.merged:
                if self.r > 0:
                    self.weight.data -= T(self.lora_B @ self.lora_A) * self.scaling
                self.merged = False
        else:
            if self.merge_weights and not self.merged:
                if self.r > 0:
                    self.weight.data += T(self.lora_B @ self.lora_A) * self.scaling
                self.merged = True

    def forward(self, x: torch.Tensor):
        def T(w):
            return w.transpose(0, 1) if self.fan_in_fan_out else w
        if self.r > 0 and not self.merged:
            result = F.linear(x, T(self.weight), bias=self.bias)
            result += (self.lora_dropout(x) @ self.lora_A.transpose(0, 1) @ self.lora_B.transpose(0, 1)) * self.scaling
            return result
        else:
            return F.linear(x, T(self.weight), bias=self.bias)


class MergedLinear(nn.Linear, LoRALayer):
    def __init__(self, in_features: int, out_features: int, r: int = 0, lora_alpha: int = 1,
                 lora_dropout: float = 0., enable_lora: List[bool] = [False], fan_in_fan_out: bool = False,
                 merge_weights: bool = True, **kwargs):
        nn.Linear.__init__(self, in_features, out_features, **kwargs)
        LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout, merge_weights=merge_weights)
        assert out_features % len(enable_lora) == 0, 'The length of enable_lora must divide out_features'
        self.enable_lora = enable_lora
        self.fan_in_fan_out = fan_in_fan_out
        if r > 0 and any(enable_lora):
            self.lora_A = nn.Parameter(self.weight.new_zeros((r * sum(enable_lora), in_features)))
            self.lora_B = nn.Parameter(
                self.weight.new_zeros((out_features // len(enable_lora) * sum(enable_lora), r)))
            self.scaling = self.lora_alpha / self.r
            self.weight.requires_grad = False
            self.lora_ind = self.weight.new_zeros((out_features, ), dtype=torch.bool).view(len(enable_lora), -1)
            self.lora_ind[enable_lora, :] = True
            self.lora_ind = self.lora_ind.view(-1)
        self.reset_parameters()
        if fan_in_fan_out:
            self.weight.data = self.weight.data.transpose(0, 1)

    def reset_parameters(self):
        nn.Linear.reset_parameters(self)
        if hasattr(self, 'lora_A'):
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            nn.init.zeros_(self.lora_B)

    def zero_pad(self, x):
        result = x.new_zeros((len(self.lora_ind), *x.shape[1:]))
        result[self.lora_ind] = x
        return result

    def merge_AB(self):
        def T(w):
            return w.transpose(0, 1) if self.fan_in_fan_out else w
        delta_w = F.conv1d(self.lora_A.unsqueeze(0), self.lora_B.unsqueeze(-1),
                           groups=sum(self.enable_lora)).squeeze(0)
        return T(self.zero_pad(delta_w))

    def train(self, mode: bool = True):
        nn.Linear.train(self, mode)
        if mode:
            if self.merge_weights and self.merged:
                if self.r > 0 and any(self.enable_lora):
                    self.weight.data -= self.merge_AB() * self.scaling
                self.merged = False
        else:
            if self.merge_weights and not self.merged:
                if self.r > 0 and any(self.enable_lora):
                    self.weight.data += self.merge_AB() * self.scaling
                self.merged = True

    def forward(self, x: torch.Tensor):
        def T(w):
            return w.transpose(0, 1) if self.fan_in_fan_out else w
        if self.merged:
            return F.linear(x, T(self.weight), bias=self.bias)
        else:
            result = F.linear(x, T(self.weight), bias=self.bias)
            if self.r > 0:
                result += self.lora_dropout(x) @ T(self.merge_AB().T) * self.scaling
            return result


def mark_only_lora_as_trainable(model: nn.Module, bias: str = 'none') -> None:
    for n, p in model.named_parameters():
        if 'lora_' not in n:
            p.requires_grad = False
    if bias == 'none':
        return
    elif bias == 'all':
        for n, p in model.named_parameters():
            if 'bias' in n:
                p.requires_grad = True
    elif bias == 'lora_only':
        for m in model.modules():
            if isinstance(m, LoRALayer) and hasattr(m, 'bias') and m.bias is not None:
                m.bias.requires_grad = True
    else:
        raise NotImplementedError


def lora_state_dict(model: nn.Module, bias: str = 'none') -> Dict[str, torch.Tensor]:
    my_state_dict = model.state_dict()
    if bias == 'none':
        return {k: my_state_dict[k] for k in my_state_dict if 'lora_' in k}
    elif bias == 'all':
        return {k: my_state_dict[k] for k in my_state_dict if 'lora_' in k or 'bias' in k}
    elif bias == 'lora_only':
        to_return = {}
        for k in my_state_dict:
            if 'lora_' in k:
                to_return[k] = my_state_dict[k]
                bias_name = k.split('lora_')[0] + 'bias'
                if bias_name in my_state_dict:
                    to_return[bias_name] = my_state_dict[bias_name]
        return to_return
    else:
        raise NotImplementedError


class Block(nn.Module):
    def __init__(self, d, n_head, r):
        super().__init__()
        self.n_head = n_head
        self.ln_1 = nn.LayerNorm(d)
        # GPT-2's Conv1D stores (in, out) weights: fan_in_fan_out=True, as loralib's README says for it
        self.c_attn = MergedLinear(d, 3 * d, r=r, lora_alpha=16, lora_dropout=0.1, enable_lora=[True, False, True],
                                   fan_in_fan_out=True, merge_weights=True)
        self.c_proj = Linear(d, d, r=r, lora_alpha=16)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(Linear(d, 4 * d, r=r, lora_alpha=16, lora_dropout=0.1), nn.GELU(),
                                 nn.Linear(4 * d, d))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = [t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v)]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(torch.tril(torch.ones(T, T)).view(1, 1, T, T) == 0, float('-inf'))
        y = F.softmax(att, dim=-1) @ v
        x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp(self.ln_2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab, d, n_head, r):
        super().__init__()
        self.wte = Embedding(vocab, d, r=r, lora_alpha=8)
        self.wpe = nn.Embedding(16, d)
        self.blocks = nn.ModuleList([Block(d, n_head, r) for _ in range(2)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrain_steps", type=int, default=8)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--bias", default="lora_only")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    vocab = 12
    data = torch.randint(0, vocab, (64, 9))
    base = TinyLM(vocab, 32, 4, r=0)
    initial_state = {"base." + k: v.clone() for k, v in base.state_dict().items()}
    opt = torch.optim.AdamW(base.parameters(), lr=3e-3)
    step_losses = []
    for step in range(args.pretrain_steps):
        xb = data[(step * 8) % 64:(step * 8) % 64 + 8]
        logits = base(xb[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), xb[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        step_losses.append(loss.item())
    model = TinyLM(vocab, 32, 4, r=4)
    initial_state.update({"lora." + k: v.clone() for k, v in model.state_dict().items()})
    missing, unexpected = model.load_state_dict(base.state_dict(), strict=False)
    mark_only_lora_as_trainable(model, bias=args.bias)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    target = (data + 1) % vocab
    model.train()
    for step in range(args.steps):
        xb, yb = data[(step * 8) % 64:(step * 8) % 64 + 8], target[(step * 8) % 64:(step * 8) % 64 + 8]
        logits = model(xb[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), yb[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        log(f"step {step} loss {loss.item():.4f}")
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    with torch.no_grad():
        unmerged = model(data[:4, :-1])
        model.eval()
        merged = model(data[:4, :-1])
        merged_weight = model.blocks[0].c_attn.weight.clone()
        model.train()
        unmerged_again = model(data[:4, :-1])
    sd = lora_state_dict(model, bias=args.bias)
    return {"initial_state": initial_state, "step_losses": step_losses, "missing": missing,
            "unexpected": unexpected, "trainable": trainable, "unmerged": unmerged, "merged": merged,
            "unmerged_again": unmerged_again, "merged_weight": merged_weight, "lora_keys": list(sd),
            "lora_sd": [v.clone() for v in sd.values()]}


if __name__ == "__main__":
    main()
