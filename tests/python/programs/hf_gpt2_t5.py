"""HuggingFace transformers' GPT-2 and T5 blocks as written (modeling_gpt2.py / modeling_t5.py, trimmed):
GPT-2's Conv1D (torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight) with size_out = x.size()[:-1] +
(self.nf,)), NewGELUActivation (0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))), the registered
uint8 causal bias from torch.tril(torch.ones(...)).view(1, 1, n, n) and masked_bias, _attn with
torch.where(causal_mask, attn_weights, mask_value) where mask_value = torch.finfo(dtype).min as a full([])
tensor, split / merge heads by view + permute, layer_past caches (torch.cat on dim -2) for incremental greedy
decoding, the extended attention mask (1.0 - mask) * torch.finfo(dtype).min, tied lm_head and the shifted
CrossEntropyLoss; _init_weights' scaled c_proj normal_(std=0.02 / sqrt(2 * n_layer)). T5: T5LayerNorm
(variance = hidden.to(torch.float32).pow(2).mean(-1, keepdim=True), hidden * torch.rsqrt(variance + eps)),
_relative_position_bucket (torch.abs, torch.log(... .float() / max_exact) / math.log(...), torch.min with
torch.full_like, torch.where), the relative attention bias Embedding permuted into position_bias, no 1/sqrt(d)
scaling, T5DenseGatedActDense with gelu_new, trained with AdamW and get_linear_schedule_with_warmup's LambdaLR."""
import argparse
import math

import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        w = torch.empty(nx, nf)
        nn.init.normal_(w, std=0.02)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        x = x.view(size_out)
        return x


class NewGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        max_positions = config["n_positions"]
        self.register_buffer("bias", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.uint8)).view(
            1, 1, max_positions, max_positions))
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.embed_dim = config["n_embd"]
        self.num_heads = config["n_head"]
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.scale_attn_weights = True
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        self.attn_dropout = nn.Dropout(config["attn_pdrop"])
        self.resid_dropout = nn.Dropout(config["resid_pdrop"])

    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        if self.scale_attn_weights:
            attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype,
                                                     device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length].to(torch.bool)
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states, layer_past=None, attention_mask=None, use_cache=False):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        if layer_past is not None:
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        present = (key, value) if use_cache is True else None
        attn_output, attn_weights = self._attn(query, key, value, attention_mask)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        attn_output = self.resid_dropout(attn_output)
        return attn_output, present


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, config):
        super().__init__()
        embed_dim = config["n_embd"]
        self.c_fc = Conv1D(intermediate_size, embed_dim)
        self.c_proj = Conv1D(embed_dim, intermediate_size)
        self.act = NewGELUActivation()
        self.dropout = nn.Dropout(config["resid_pdrop"])

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        hidden_states = self.dropout(hidden_states)
        return hidden_states


class GPT2Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden_size = config["n_embd"]
        self.ln_1 = nn.LayerNorm(hidden_size, eps=config["layer_norm_epsilon"])
        self.attn = GPT2Attention(config)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=config["layer_norm_epsilon"])
        self.mlp = GPT2MLP(4 * hidden_size, config)

    def forward(self, hidden_states, layer_past=None, attention_mask=None, use_cache=False):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output, present = self.attn(hidden_states, layer_past=layer_past, attention_mask=attention_mask,
                                          use_cache=use_cache)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        hidden_states = residual + feed_forward_hidden_states
        return hidden_states, present


class GPT2LMHeadModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config["vocab_size"], config["n_embd"])
        self.wpe = nn.Embedding(config["n_positions"], config["n_embd"])
        self.drop = nn.Dropout(config["embd_pdrop"])
        self.h = nn.ModuleList([GPT2Block(config) for _ in range(config["n_layer"])])
        self.ln_f = nn.LayerNorm(config["n_embd"], eps=config["layer_norm_epsilon"])
        self.lm_head = nn.Linear(config["n_embd"], config["vocab_size"], bias=False)
        self.apply(self._init_weights)
        self.lm_head.weight = self.wte.weight

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, Conv1D)):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=0.02)
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)
        for name, p in module.named_parameters():
            if name == "c_proj.weight":
                p.data.normal_(mean=0.0, std=(0.02 / math.sqrt(2 * self.config["n_layer"])))

    def forward(self, input_ids, past_key_values=None, attention_mask=None, labels=None, use_cache=False):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        batch_size = input_ids.shape[0]
        if past_key_values is None:
            past_length = 0
            past_key_values = tuple([None] * len(self.h))
        else:
            past_length = past_key_values[0][0].size(-2)
        position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        if attention_mask is not None:
            attention_mask = attention_mask.view(batch_size, -1)
            attention_mask = attention_mask[:, None, None, :]
            attention_mask = attention_mask.to(dtype=self.wte.weight.dtype)
            attention_mask = (1.0 - attention_mask) * torch.finfo(self.wte.weight.dtype).min
        hidden_states = self.wte(input_ids) + self.wpe(position_ids)
        hidden_states = self.drop(hidden_states)
        presents = () if use_cache else None
        for block, layer_past in zip(self.h, past_key_values):
            hidden_states, present = block(hidden_states, layer_past=layer_past, attention_mask=attention_mask,
                                           use_cache=use_cache)
            if use_cache:
                presents = presents + (present,)
        hidden_states = self.ln_f(hidden_states)
        lm_logits = self.lm_head(hidden_states)
        loss = None
        if labels is not None:
            shift_logits = lm_logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss_fct = CrossEntropyLoss()
            loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        return loss, lm_logits, presents


class T5LayerNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        if self.weight.dtype in [torch.float16, torch.bfloat16]:
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states


class T5Attention(nn.Module):
    def __init__(self, d_model, d_kv, n_heads, has_relative_attention_bias, num_buckets=8, max_distance=16,
                 is_decoder=False):
        super().__init__()
        self.is_decoder = is_decoder
        self.has_relative_attention_bias = has_relative_attention_bias
        self.relative_attention_num_buckets = num_buckets
        self.relative_attention_max_distance = max_distance
        self.d_model = d_model
        self.key_value_proj_dim = d_kv
        self.n_heads = n_heads
        self.inner_dim = self.n_heads * self.key_value_proj_dim
        self.q = nn.Linear(self.d_model, self.inner_dim, bias=False)
        self.k = nn.Linear(self.d_model, self.inner_dim, bias=False)
        self.v = nn.Linear(self.d_model, self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, self.d_model, bias=False)
        if self.has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(self.relative_attention_num_buckets, self.n_heads)

    @staticmethod
    def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        relative_buckets = 0
        if bidirectional:
            num_buckets //= 2
            relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
            relative_position = torch.abs(relative_position)
        else:
            relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            torch.log(relative_position.float() / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).to(torch.long)
        relative_position_if_large = torch.min(
            relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
        )
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    def compute_bias(self, query_length, key_length):
        context_position = torch.arange(query_length, dtype=torch.long)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long)[None, :]
        relative_position = memory_position - context_position
        relative_position_bucket = self._relative_position_bucket(
            relative_position, bidirectional=(not self.is_decoder), num_buckets=self.relative_attention_num_buckets,
            max_distance=self.relative_attention_max_distance)
        values = self.relative_attention_bias(relative_position_bucket)
        values = values.permute([2, 0, 1]).unsqueeze(0)
        return values

    def forward(self, hidden_states, mask=None, position_bias=None):
        batch_size, seq_length = hidden_states.shape[:2]

        def shape(states):
            return states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)

        def unshape(states):
            return states.transpose(1, 2).contiguous().view(batch_size, -1, self.inner_dim)

        query_states = shape(self.q(hidden_states))
        key_states = shape(self.k(hidden_states))
        value_states = shape(self.v(hidden_states))
        scores = torch.matmul(query_states, key_states.transpose(3, 2))
        if position_bias is None:
            position_bias = self.compute_bias(seq_length, seq_length)
            if mask is not None:
                position_bias = position_bias + mask
        scores += position_bias
        attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        attn_output = unshape(torch.matmul(attn_weights, value_states))
        attn_output = self.o(attn_output)
        return attn_output, position_bias


class T5DenseGatedActDense(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.wi_0 = nn.Linear(d_model, d_ff, bias=False)
        self.wi_1 = nn.Linear(d_model, d_ff, bias=False)
        self.wo = nn.Linear(d_ff, d_model, bias=False)
        self.act = NewGELUActivation()

    def forward(self, hidden_states):
        hidden_gelu = self.act(self.wi_0(hidden_states))
        hidden_linear = self.wi_1(hidden_states)
        return self.wo(hidden_gelu * hidden_linear)


class T5Encoder(nn.Module):
    def __init__(self, vocab, d_model=16, d_kv=8, n_heads=2, n_layers=2, d_ff=32, n_classes=3):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d_model)
        self.attn = nn.ModuleList([T5Attention(d_model, d_kv, n_heads, i == 0) for i in range(n_layers)])
        self.ln_attn = nn.ModuleList([T5LayerNorm(d_model) for _ in range(n_layers)])
        self.ff = nn.ModuleList([T5DenseGatedActDense(d_model, d_ff) for _ in range(n_layers)])
        self.ln_ff = nn.ModuleList([T5LayerNorm(d_model) for _ in range(n_layers)])
        self.final_layer_norm = T5LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_classes)
        factor = 1.0
        for a in self.attn:
            a.q.weight.data.normal_(mean=0.0, std=factor * ((d_model * d_kv) ** -0.5))
            a.k.weight.data.normal_(mean=0.0, std=factor * (d_model ** -0.5))
            a.v.weight.data.normal_(mean=0.0, std=factor * (d_model ** -0.5))
            a.o.weight.data.normal_(mean=0.0, std=factor * ((n_heads * d_kv) ** -0.5))
            if a.has_relative_attention_bias:
                a.relative_attention_bias.weight.data.normal_(mean=0.0, std=factor * (d_model ** -0.5))

    def forward(self, input_ids, attention_mask):
        extended = attention_mask[:, None, None, :].to(torch.float32)
        extended = (1.0 - extended) * torch.finfo(torch.float32).min
        h = self.embed_tokens(input_ids)
        position_bias = None
        for attn, ln_a, ff, ln_f in zip(self.attn, self.ln_attn, self.ff, self.ln_ff):
            out, position_bias = attn(ln_a(h), mask=extended, position_bias=position_bias)
            h = h + out
            h = h + ff(ln_f(h))
        h = self.final_layer_norm(h)
        pooled = (h * attention_mask.unsqueeze(-1)).sum(1) / attention_mask.sum(1, keepdim=True)
        return self.head(pooled)


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step) / float(max(1, num_training_steps - num_warmup_steps)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda, last_epoch)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="gpt2", choices=["gpt2", "t5"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    step_losses = []
    if args.model == "gpt2":
        config = dict(vocab_size=40, n_positions=24, n_embd=16, n_layer=2, n_head=2, resid_pdrop=0.1,
                      embd_pdrop=0.1, attn_pdrop=0.1, layer_norm_epsilon=1e-5)
        model = GPT2LMHeadModel(config)
        data = torch.randint(0, 40, (args.steps, 4, 12))
        mask = torch.ones(args.steps, 4, 12, dtype=torch.long)
        mask[:, 0, 9:] = 0
    else:
        model = T5Encoder(40)
        data = torch.randint(0, 40, (args.steps, 4, 12))
        mask = torch.ones(args.steps, 4, 12, dtype=torch.long)
        mask[:, 1, 7:] = 0
        labels = data[:, :, 0] % 3
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    no_decay = ["bias", "LayerNorm.weight", "ln_1.weight", "ln_2.weight", "ln_f.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=3e-3, eps=1e-8)
    scheduler = get_linear_schedule_with_warmup(optimizer, 2, args.steps)
    model.train()
    lrs = []
    for i in range(args.steps):
        if args.model == "gpt2":
            loss, _, _ = model(data[i], attention_mask=mask[i], labels=data[i])
        else:
            loss = nn.functional.cross_entropy(model(data[i], mask[i]), labels[i])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        lrs.append(scheduler.get_last_lr()[0])
        step_losses.append(loss.item())
        log("step %d loss %.4f" % (i, loss.item()))
    model.eval()
    result = {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs}
    with torch.no_grad():
        if args.model == "gpt2":
            input_ids = data[0, :2, :4]
            _, logits, past = model(input_ids, use_cache=True)
            generated = [input_ids]
            for _ in range(5):
                next_token = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
                generated.append(next_token)
                _, logits, past = model(next_token, past_key_values=past, use_cache=True)
            result["generated"] = torch.cat(generated, dim=-1)
            _, full_logits, _ = model(result["generated"])
            result["last_logits"] = logits[:, -1]
            result["full_last_logits"] = full_logits[:, -1]
        else:
            result["buckets"] = T5Attention._relative_position_bucket(
                torch.arange(-40, 40)[None, :], bidirectional=True, num_buckets=32, max_distance=128)
            result["buckets_dec"] = T5Attention._relative_position_bucket(
                torch.arange(-40, 40)[None, :], bidirectional=False, num_buckets=32, max_distance=128)
            result["logits"] = model(data[0], mask[0])
    return result


if __name__ == "__main__":
    main()
