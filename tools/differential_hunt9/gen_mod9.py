"""nn.Module gradient snippets: each module in float64 with its parameters set from NumPy's seeded generator
(the same in both libraries), run in train or eval mode; compared: the output and the gradients of every
parameter and of the input. Usage: gen_mod9.py > mod.txt"""

NN = 'torch.nn'
MODS = [
    # (constructor, input shape, extra forward args)
    (f'{NN}.Linear(4, 3)', (2, 4), ''),
    (f'{NN}.Bilinear(4, 3, 2)', None, 'bil'),
    (f'{NN}.Conv1d(3, 4, 3, padding=1, padding_mode="circular")', (2, 3, 7), ''),
    (f'{NN}.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")', (2, 3, 5, 6), ''),
    (f'{NN}.Conv2d(3, 4, 3, padding=2, padding_mode="replicate", dilation=2)', (2, 3, 5, 6), ''),
    (f'{NN}.Conv2d(4, 4, 3, groups=2, stride=2, bias=False)', (2, 4, 7, 6), ''),
    (f'{NN}.Conv2d(4, 4, 3, groups=4, padding="same")', (2, 4, 5, 5), ''),
    (f'{NN}.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)', (2, 3, 4, 4), ''),
    (f'{NN}.ConvTranspose1d(4, 4, 3, groups=2, dilation=2)', (2, 4, 5), ''),
    (f'{NN}.Conv3d(2, 3, 2, stride=(1, 2, 1))', (1, 2, 3, 4, 4), ''),
    (f'{NN}.BatchNorm1d(4)', (5, 4), ''),
    (f'{NN}.BatchNorm2d(3)', (2, 3, 4, 4), ''),
    (f'{NN}.BatchNorm2d(3, affine=False, track_running_stats=False)', (2, 3, 4, 4), ''),
    (f'{NN}.BatchNorm3d(2, momentum=None)', (2, 2, 3, 3, 2), ''),
    (f'{NN}.InstanceNorm2d(3, affine=True)', (2, 3, 4, 4), ''),
    (f'{NN}.InstanceNorm1d(3, track_running_stats=True)', (2, 3, 6), ''),
    (f'{NN}.GroupNorm(2, 4)', (2, 4, 3, 3), ''),
    (f'{NN}.LayerNorm([3, 4])', (2, 3, 4), ''),
    (f'{NN}.LayerNorm(4, elementwise_affine=False)', (2, 3, 4), ''),
    (f'{NN}.LocalResponseNorm(2)', (2, 4, 3, 3), ''),
    (f'{NN}.Embedding(7, 3, padding_idx=1)', 'idx', ''),
    (f'{NN}.Embedding(7, 3, max_norm=0.5)', 'idx', ''),
    (f'{NN}.EmbeddingBag(7, 3, mode="mean")', 'idx', ''),
    (f'{NN}.EmbeddingBag(7, 3, mode="max")', 'idx', ''),
    (f'{NN}.PReLU(3)', (2, 3, 4), ''),
    (f'{NN}.RNN(4, 3)', (5, 2, 4), ''),
    (f'{NN}.RNN(4, 3, num_layers=2, nonlinearity="relu", batch_first=True)', (2, 5, 4), ''),
    (f'{NN}.RNN(4, 3, bidirectional=True)', (5, 2, 4), ''),
    (f'{NN}.LSTM(4, 3)', (5, 2, 4), ''),
    (f'{NN}.LSTM(4, 3, num_layers=2, batch_first=True, bidirectional=True)', (2, 5, 4), ''),
    (f'{NN}.LSTM(4, 3, proj_size=2)', (5, 2, 4), ''),
    (f'{NN}.LSTM(4, 3, bias=False)', (5, 4), ''),
    (f'{NN}.GRU(4, 3)', (5, 2, 4), ''),
    (f'{NN}.GRU(4, 3, num_layers=2, bidirectional=True, batch_first=True)', (2, 5, 4), ''),
    (f'{NN}.LSTMCell(4, 3)', (2, 4), ''),
    (f'{NN}.GRUCell(4, 3)', (2, 4), ''),
    (f'{NN}.RNNCell(4, 3, nonlinearity="tanh")', (2, 4), ''),
    (f'{NN}.MultiheadAttention(4, 2)', (3, 2, 4), 'mha'),
    (f'{NN}.MultiheadAttention(4, 2, batch_first=True, kdim=3, vdim=5)', None, 'mha_kv'),
    (f'{NN}.MultiheadAttention(4, 1, bias=False, add_bias_kv=True, add_zero_attn=True)', (3, 2, 4), 'mha'),
    (f'{NN}.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0)', (3, 2, 4), ''),
    (f'{NN}.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, norm_first=True, batch_first=True, activation="gelu")', (2, 3, 4), ''),
    (f'{NN}.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0)', (3, 2, 4), 'dec'),
    (f'{NN}.Transformer(4, 2, 1, 1, 6, dropout=0.0)', (3, 2, 4), 'dec'),
    (f'{NN}.Sequential({NN}.Linear(4, 5), {NN}.ReLU(), {NN}.Dropout(0.0), {NN}.Linear(5, 2), {NN}.LogSoftmax(1))', (3, 4), ''),
    (f'{NN}.Sequential({NN}.Conv2d(3, 4, 3), {NN}.BatchNorm2d(4), {NN}.ReLU(), {NN}.MaxPool2d(2), {NN}.Flatten(), {NN}.Linear(16, 2))', (2, 3, 6, 6), ''),
    (f'{NN}.Sequential({NN}.Conv2d(3, 4, 3), {NN}.GELU(), {NN}.AdaptiveAvgPool2d(1), {NN}.Flatten(), {NN}.Linear(4, 2), {NN}.Softmax(-1))', (2, 3, 6, 6), ''),
    (f'{NN}.Upsample(scale_factor=2, mode="bilinear")', (1, 2, 3, 3), ''),
    (f'{NN}.PixelShuffle(2)', (1, 8, 2, 3), ''),
    (f'{NN}.Unfold(2, stride=1)', (1, 2, 3, 4), ''),
    (f'{NN}.Fold((3, 4), 2)', (1, 8, 6), ''),
    (f'{NN}.CosineSimilarity(1)', None, 'pair'),
    (f'{NN}.PairwiseDistance()', None, 'pair'),
]

PRE = ('from h9 import *⏎m = {ctor}.double()⏎'
       'for k, p in enumerate(m.parameters()):⏎    p.data = torch.tensor(A(*p.shape, seed=50 + k)) * 0.5⏎'
       'm.{mode}()⏎')
POST = ('ys = [y] if not isinstance(y, tuple) else [t for e in y for t in (e if isinstance(e, tuple) else (e,))]⏎ys = [t for t in ys if t is not None and t.requires_grad]⏎'
        'L = sum((t * torch.tensor(A(*t.shape, seed=90 + i))).sum() for i, t in enumerate(ys))⏎'
        'ps = [x] + [p for p in m.parameters() if p.requires_grad]⏎'
        'gs = torch.autograd.grad(L, ps, allow_unused=True)⏎'
        'bufs = [b for b in m.buffers() if b.is_floating_point()]⏎'
        'r = (ys, gs, bufs)')


def snippet(ctor, shape, extra, mode):
    s = PRE.format(ctor=ctor, mode=mode)
    if shape == 'idx':
        s += 'x = T(1, seed=3)⏎i = torch.tensor([[1, 2, 4], [6, 1, 1]])⏎y = m(i) * x⏎'
    elif extra == 'bil':
        s += 'x = T(2, 4, seed=3)⏎x2 = T(2, 3, seed=4)⏎y = m(x, x2)⏎'
    elif extra == 'pair':
        s += 'x = T(3, 4, seed=3)⏎y = m(x, T(3, 4, seed=4, g=False))⏎'
    elif extra == 'mha':
        s += (f'x = T(*{shape}, seed=3)⏎k = T(*{shape}, seed=4, g=False)⏎'
              'y = m(x, k, k, key_padding_mask=torch.tensor([[False, False, True], [False, False, False]]))⏎')
    elif extra == 'mha_kv':
        s += ('x = T(2, 3, 4, seed=3)⏎k = T(2, 5, 3, seed=4, g=False)⏎v = T(2, 5, 5, seed=5, g=False)⏎'
              'y = m(x, k, v, attn_mask=torch.tensor([[False] * 4 + [True]] * 3))⏎')
    elif extra == 'dec':
        s += f'x = T(*{shape}, seed=3)⏎mem = T(*{shape}, seed=4)⏎y = m(mem, x) if "Transformer(" in "{ctor}" else m(x, mem)⏎'
    else:
        s += f'x = T(*{shape}, seed=3)⏎y = m(x)⏎'
    return s + POST


if __name__ == '__main__':
    for ctor, shape, extra in MODS:
        for mode in ('train', 'eval'):
            print(snippet(ctor, shape, extra, mode))
