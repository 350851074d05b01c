"""sooftware/conformer (conformer/encoder.py, convolution.py, attention.py, feed_forward.py, modules.py,
embedding.py) as a small CTC speech recogniser in plain torch: the macaron FeedForwardModule (LayerNorm, Linear,
Swish by inputs * inputs.sigmoid(), Dropout) in ResidualConnectionModule(module_factor=0.5), Conv2dSubampling
(two stride-2 Conv2d + ReLU, outputs.permute(0, 2, 1, 3).contiguous().view(...), output_lengths = (lengths >> 2)
- 1), the relative-position MultiHeadedSelfAttention (RelPositionalEncoding by a sin / cos table register_buffer'd
with persistent=False, u_bias / v_bias nn.Parameter(torch.Tensor(...)) with torch.nn.init.xavier_uniform_,
_relative_shift by zero-padding with torch.cat and .view(...)[:, :, 1:].view_as(pos_score), masked_fill_ of the
padding mask, F.softmax), ConformerConvModule (pointwise Conv1d, GLU(dim=1), depthwise Conv1d(groups=in_channels,
padding=(kernel_size - 1) // 2), BatchNorm1d, Swish, pointwise Conv1d), Transpose modules, and
nn.CTCLoss over F.log_softmax(...).transpose(0, 1) with the subsampled lengths, AdamW and a Noam-style warmup
through LambdaLR, then greedy CTC decoding by argmax / unique_consecutive."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init
from torch import Tensor


class Swish(nn.Module):
    def forward(self, inputs: Tensor) -> Tensor:
        return inputs * inputs.sigmoid()


class GLU(nn.Module):
    def __init__(self, dim: int) -> None:
        super(GLU, self).__init__()
        self.dim = dim

    def forward(self, inputs: Tensor) -> Tensor:
        outputs, gate = inputs.chunk(2, dim=self.dim)
        return outputs * gate.sigmoid()


class Transpose(nn.Module):
    def __init__(self, shape: tuple):
        super(Transpose, self).__init__()
        self.shape = shape

    def forward(self, x: Tensor) -> Tensor:
        return x.transpose(*self.shape)


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super(Linear, self).__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        init.xavier_uniform_(self.linear.weight)
        if bias:
            init.zeros_(self.linear.bias)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear(x)


class ResidualConnectionModule(nn.Module):
    def __init__(self, module: nn.Module, module_factor: float = 1.0, input_factor: float = 1.0):
        super(ResidualConnectionModule, self).__init__()
        self.module = module
        self.module_factor = module_factor
        self.input_factor = input_factor

    def forward(self, inputs: Tensor, mask=None) -> Tensor:
        if mask is None:
            return (self.module(inputs) * self.module_factor) + (inputs * self.input_factor)
        return (self.module(inputs, mask) * self.module_factor) + (inputs * self.input_factor)


class FeedForwardModule(nn.Module):
    def __init__(self, encoder_dim=32, expansion_factor=4, dropout_p=0.1):
        super(FeedForwardModule, self).__init__()
        self.sequential = nn.Sequential(
            nn.LayerNorm(encoder_dim),
            Linear(encoder_dim, encoder_dim * expansion_factor, bias=True),
            Swish(),
            nn.Dropout(p=dropout_p),
            Linear(encoder_dim * expansion_factor, encoder_dim, bias=True),
            nn.Dropout(p=dropout_p),
        )

    def forward(self, inputs: Tensor) -> Tensor:
        return self.sequential(inputs)


class DepthwiseConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=False):
        super(DepthwiseConv1d, self).__init__()
        assert out_channels % in_channels == 0, "out_channels should be constant multiple of in_channels"
        self.conv = nn.Conv1d(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size,
                              groups=in_channels, stride=stride, padding=padding, bias=bias)

    def forward(self, inputs: Tensor) -> Tensor:
        return self.conv(inputs)


class PointwiseConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1, padding=0, bias=True):
        super(PointwiseConv1d, self).__init__()
        self.conv = nn.Conv1d(in_channels=in_channels, out_channels=out_channels, kernel_size=1, stride=stride,
                              padding=padding, bias=bias)

    def forward(self, inputs: Tensor) -> Tensor:
        return self.conv(inputs)


class ConformerConvModule(nn.Module):
    def __init__(self, in_channels, kernel_size=7, expansion_factor=2, dropout_p=0.1):
        super(ConformerConvModule, self).__init__()
        assert (kernel_size - 1) % 2 == 0, "kernel_size should be a odd number for 'SAME' padding"
        self.sequential = nn.Sequential(
            nn.LayerNorm(in_channels),
            Transpose(shape=(1, 2)),
            PointwiseConv1d(in_channels, in_channels * expansion_factor, stride=1, padding=0, bias=True),
            GLU(dim=1),
            DepthwiseConv1d(in_channels, in_channels, kernel_size, stride=1, padding=(kernel_size - 1) // 2),
            nn.BatchNorm1d(in_channels),
            Swish(),
            PointwiseConv1d(in_channels, in_channels, stride=1, padding=0, bias=True),
            nn.Dropout(p=dropout_p),
        )

    def forward(self, inputs: Tensor) -> Tensor:
        return self.sequential(inputs).transpose(1, 2)


class Conv2dSubampling(nn.Module):
    def __init__(self, in_channels: int, out_channels: int) -> None:
        super(Conv2dSubampling, self).__init__()
        self.sequential = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=2),
            nn.ReLU(),
        )

    def forward(self, inputs: Tensor, input_lengths: Tensor):
        outputs = self.sequential(inputs.unsqueeze(1))
        batch_size, channels, subsampled_lengths, sumsampled_dim = outputs.size()
        outputs = outputs.permute(0, 2, 1, 3)
        outputs = outputs.contiguous().view(batch_size, subsampled_lengths, channels * sumsampled_dim)
        output_lengths = (input_lengths >> 2) - 1
        return outputs, output_lengths


class RelPositionalEncoding(nn.Module):
    def __init__(self, d_model: int = 32, max_len: int = 200) -> None:
        super(RelPositionalEncoding, self).__init__()
        self.d_model = d_model
        pe = torch.zeros(max_len, d_model, requires_grad=False)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)
        self.register_buffer('pe', pe, persistent=False)

    def forward(self, length: int) -> Tensor:
        return self.pe[:, :length]


class RelativeMultiHeadAttention(nn.Module):
    def __init__(self, d_model: int = 32, num_heads: int = 4, dropout_p: float = 0.1):
        super(RelativeMultiHeadAttention, self).__init__()
        assert d_model % num_heads == 0, "d_model % num_heads should be zero."
        self.d_model = d_model
        self.d_head = int(d_model / num_heads)
        self.num_heads = num_heads
        self.sqrt_dim = math.sqrt(d_model)
        self.query_proj = Linear(d_model, d_model)
        self.key_proj = Linear(d_model, d_model)
        self.value_proj = Linear(d_model, d_model)
        self.pos_proj = Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(p=dropout_p)
        self.u_bias = nn.Parameter(torch.Tensor(self.num_heads, self.d_head))
        self.v_bias = nn.Parameter(torch.Tensor(self.num_heads, self.d_head))
        torch.nn.init.xavier_uniform_(self.u_bias)
        torch.nn.init.xavier_uniform_(self.v_bias)
        self.out_proj = Linear(d_model, d_model)

    def forward(self, query, key, value, pos_embedding, mask=None):
        batch_size = value.size(0)
        query = self.query_proj(query).view(batch_size, -1, self.num_heads, self.d_head)
        key = self.key_proj(key).view(batch_size, -1, self.num_heads, self.d_head).permute(0, 2, 1, 3)
        value = self.value_proj(value).view(batch_size, -1, self.num_heads, self.d_head).permute(0, 2, 1, 3)
        pos_embedding = self.pos_proj(pos_embedding).view(batch_size, -1, self.num_heads, self.d_head)
        content_score = torch.matmul((query + self.u_bias).transpose(1, 2), key.transpose(2, 3))
        pos_score = torch.matmul((query + self.v_bias).transpose(1, 2), pos_embedding.permute(0, 2, 3, 1))
        pos_score = self._relative_shift(pos_score)
        score = (content_score + pos_score) / self.sqrt_dim
        if mask is not None:
            mask = mask.unsqueeze(1)
            score.masked_fill_(mask, -1e9)
        attn = F.softmax(score, -1)
        attn = self.dropout(attn)
        context = torch.matmul(attn, value).transpose(1, 2)
        context = context.contiguous().view(batch_size, -1, self.d_model)
        return self.out_proj(context)

    def _relative_shift(self, pos_score: Tensor) -> Tensor:
        batch_size, num_heads, seq_length1, seq_length2 = pos_score.size()
        zeros = pos_score.new_zeros(batch_size, num_heads, seq_length1, 1)
        padded_pos_score = torch.cat([zeros, pos_score], dim=-1)
        padded_pos_score = padded_pos_score.view(batch_size, num_heads, seq_length2 + 1, seq_length1)
        pos_score = padded_pos_score[:, :, 1:].view_as(pos_score)
        return pos_score


class MultiHeadedSelfAttentionModule(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout_p: float = 0.1):
        super(MultiHeadedSelfAttentionModule, self).__init__()
        self.positional_encoding = RelPositionalEncoding(d_model)
        self.layer_norm = nn.LayerNorm(d_model)
        self.attention = RelativeMultiHeadAttention(d_model, num_heads, dropout_p)
        self.dropout = nn.Dropout(p=dropout_p)

    def forward(self, inputs: Tensor, mask=None):
        batch_size, seq_length, _ = inputs.size()
        pos_embedding = self.positional_encoding(seq_length)
        pos_embedding = pos_embedding.repeat(batch_size, 1, 1)
        inputs = self.layer_norm(inputs)
        outputs = self.attention(inputs, inputs, inputs, pos_embedding=pos_embedding, mask=mask)
        return self.dropout(outputs)


class ConformerBlock(nn.Module):
    def __init__(self, encoder_dim=32, num_attention_heads=4, feed_forward_expansion_factor=4,
                 conv_expansion_factor=2, dropout_p=0.1, conv_kernel_size=7, half_step_residual=True):
        super(ConformerBlock, self).__init__()
        self.feed_forward_residual_factor = 0.5 if half_step_residual else 1
        self.ff1 = ResidualConnectionModule(FeedForwardModule(encoder_dim, feed_forward_expansion_factor, dropout_p),
                                            module_factor=self.feed_forward_residual_factor)
        self.attn = MultiHeadedSelfAttentionModule(encoder_dim, num_attention_heads, dropout_p)
        self.conv = ResidualConnectionModule(ConformerConvModule(encoder_dim, conv_kernel_size,
                                                                 conv_expansion_factor, dropout_p))
        self.ff2 = ResidualConnectionModule(FeedForwardModule(encoder_dim, feed_forward_expansion_factor, dropout_p),
                                            module_factor=self.feed_forward_residual_factor)
        self.norm = nn.LayerNorm(encoder_dim)

    def forward(self, inputs: Tensor, mask=None) -> Tensor:
        x = self.ff1(inputs)
        x = x + self.attn(x, mask)
        x = self.conv(x)
        x = self.ff2(x)
        return self.norm(x)


class Conformer(nn.Module):
    def __init__(self, num_classes, input_dim=16, encoder_dim=32, num_layers=2, num_attention_heads=4,
                 conv_kernel_size=7, dropout_p=0.1):
        super(Conformer, self).__init__()
        self.conv_subsample = Conv2dSubampling(in_channels=1, out_channels=encoder_dim)
        self.input_projection = nn.Sequential(
            Linear(encoder_dim * (((input_dim - 1) // 2 - 1) // 2), encoder_dim),
            nn.Dropout(p=dropout_p),
        )
        self.layers = nn.ModuleList([ConformerBlock(encoder_dim=encoder_dim, num_attention_heads=num_attention_heads,
                                                    dropout_p=dropout_p, conv_kernel_size=conv_kernel_size)
                                     for _ in range(num_layers)])
        self.fc = Linear(encoder_dim, num_classes, bias=False)

    def count_parameters(self) -> int:
        return sum([p.numel() for p in self.parameters()])

    def forward(self, inputs: Tensor, input_lengths: Tensor):
        outputs, output_lengths = self.conv_subsample(inputs, input_lengths)
        outputs = self.input_projection(outputs)
        T = outputs.size(1)
        mask = torch.arange(T).unsqueeze(0) >= output_lengths.unsqueeze(1)
        mask = mask.unsqueeze(1).expand(-1, T, -1)
        for layer in self.layers:
            outputs = layer(outputs, mask)
        outputs = self.fc(outputs)
        outputs = F.log_softmax(outputs, dim=-1)
        return outputs, output_lengths


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--no-mask", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    batch_size, sequence_length, dim, num_classes = 4, 64, 16, 6
    model = Conformer(num_classes=num_classes, input_dim=dim, encoder_dim=32, num_layers=2,
                      num_attention_heads=4)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = nn.CTCLoss(blank=0, zero_infinity=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    warmup = 4
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) ** -0.5, (step + 1) * warmup ** -1.5) * warmup ** 0.5)
    inputs = torch.rand(batch_size, sequence_length, dim)
    input_lengths = torch.LongTensor([64, 60, 56, 50])
    targets = torch.LongTensor([[1, 3, 3, 2, 5, 3, 2, 4, 1, 0],
                                [3, 3, 3, 2, 4, 1, 0, 0, 0, 0],
                                [1, 2, 5, 5, 4, 3, 0, 0, 0, 0],
                                [2, 4, 1, 3, 0, 0, 0, 0, 0, 0]])
    target_lengths = torch.LongTensor([9, 6, 6, 4])
    step_losses, lrs = [], []
    for step in range(args.steps):
        model.train()
        outputs, output_lengths = model(inputs, input_lengths)
        loss = criterion(outputs.transpose(0, 1), targets, output_lengths, target_lengths)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
        step_losses.append(loss.item())
        log(step, loss.item())
    model.eval()
    with torch.no_grad():
        outputs, output_lengths = model(inputs, input_lengths)
        best = outputs.argmax(-1)
        decoded = [[t for t in torch.unique_consecutive(best[i, :output_lengths[i]]).tolist() if t != 0]
                   for i in range(batch_size)]
    return {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs, "eval_out": outputs,
            "decoded": decoded, "n_params": model.count_parameters(), "out_lengths": output_lengths}


if __name__ == "__main__":
    main()
