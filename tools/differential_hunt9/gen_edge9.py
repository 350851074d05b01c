"""Gradients at special points (zeros, ties, -inf logits, NaN in an unselected branch, singular inputs),
float32 and float64, first order and (a selection) second order. Usage: gen_edge9.py > edge.txt"""

CASES = []
V = {
    'z': '[0., 0., 0.]', 'zp': '[0., 1., -2.]', 'tie': '[1., 3., 3.]', 'ninf': '[-inf, 0., 1.]', 'allninf': '[-inf, -inf, -inf]',
    'nan': '[nan, 1., 2.]', 'inf': '[inf, 1., -1.]', 'big': '[1e30, -1e30, 3.]', 'tiny': '[1e-30, -1e-30, 0.]',
}
EXPRS = [
    'x.norm()', 'x.norm(1)', 'x.norm(float("inf"))', 'x.norm(0.5)', 'torch.linalg.vector_norm(x, 3)', 'x.sqrt().sum()',
    'x.abs()', 'x.sign()', 'x.pow(2)', 'x.pow(0.5)', 'x.pow(0)', 'x.pow(-1)', 'torch.pow(0., x)', 'torch.pow(x, x)',
    'x.max()', 'x.min()', 'x.amax()', 'x.max(0)[0]', 'x.median()', 'x.sort()[0]', 'x.topk(2)[0]', 'x.cummax(0)[0]',
    'x.std()', 'x.var()', 'x[:1].std()', 'x.logsumexp(0)', 'x.softmax(0)', 'x.log_softmax(0)', 'x.exp().log()',
    'torch.nn.functional.softmax(x.reshape(1, 3), 1)', 'torch.nn.functional.cross_entropy(x.reshape(1, 3), torch.tensor([1]))',
    'torch.nn.functional.cross_entropy(x.reshape(1, 3), torch.tensor([0]))', 'torch.where(x > 0, x.log(), x)',
    'torch.where(x > 0, x.sqrt(), torch.zeros_like(x))', 'torch.atan2(x, x)', 'torch.atan2(x, torch.zeros_like(x))',
    'x.prod()', 'x.cumprod(0)', 'x.clamp(0, 1)', 'x.clamp(min=0)', 'x.relu()', 'torch.nn.functional.leaky_relu(x, 0.1)',
    'torch.nn.functional.hardtanh(x)', 'torch.nn.functional.elu(x)', 'torch.nn.functional.gelu(x)', 'torch.nn.functional.silu(x)',
    'torch.nn.functional.softplus(x)', 'torch.nn.functional.normalize(x, dim=0)', 'torch.nn.functional.smooth_l1_loss(x, x.detach() * 0)',
    'torch.nn.functional.huber_loss(x, torch.zeros_like(x))', 'torch.nn.functional.l1_loss(x, torch.zeros_like(x))',
    'torch.cdist(x.reshape(3, 1), x.detach().reshape(3, 1))', 'torch.dist(x, torch.zeros_like(x))', 'x.reciprocal()', 'x.log()',
    'x.log1p()', 'x.xlogy(x)', 'torch.special.xlogy(x, x)', 'torch.special.entr(x)', 'x.sigmoid().log()',
    'torch.nn.functional.logsigmoid(x)', 'torch.nn.functional.binary_cross_entropy_with_logits(x, torch.ones_like(x))',
    'x.tanh()', 'x.erf()', 'x.asin()', 'x.acos()', 'x.atanh()', 'x.fmod(2)', 'x.remainder(2)', 'x.floor()', 'x.round()',
    'x.frac()', 'x.trunc()', 'x.nan_to_num()', 'torch.nan_to_num(x, 0., 1., -1.)', 'x.nansum()', 'x.nanmean()',
    'torch.maximum(x, x.flip(0))', 'torch.minimum(x, torch.zeros_like(x))', 'torch.fmax(x, torch.zeros_like(x))',
    'x.lerp(torch.zeros_like(x), 0.5)', 'x.hypot(x)', 'x.logaddexp(x)', 'x.logit()', 'x.sinc()', 'x.expm1()',
    'x.masked_fill(x.isnan(), 0.)', 'x.diff()', 'x.outer(x)', 'torch.logcumsumexp(x, 0)', 'x.mean()', 'x.sum()',
]
for name, vals in V.items():
    for dt in ('float64', 'float32'):
        for e in EXPRS:
            CASES.append(f'x = torch.tensor({vals}, dtype=torch.{dt}, requires_grad=True)⏎r = G({e}, x)')
for name in ('z', 'zp', 'tie', 'ninf'):
    for e in ['x.norm()', 'x.sqrt().sum()', 'x.abs()', 'x.pow(2)', 'x.std()', 'x.logsumexp(0)', 'x.softmax(0)',
              'torch.nn.functional.normalize(x, dim=0)', 'x.prod()', 'x.cumprod(0)', 'torch.where(x > 0, x.log(), x)',
              'torch.nn.functional.gelu(x)', 'torch.nn.functional.silu(x)', 'x.max()', 'x.tanh()', 'x.sigmoid()']:
        CASES.append(f'x = torch.tensor({V[name]}, dtype=torch.float64, requires_grad=True)⏎r = G2({e}, x)')
# singular / degenerate linalg
for m in ['[[1., 2.], [2., 4.]]', '[[0., 0.], [0., 0.]]', '[[1., 0.], [0., 1.]]', '[[2., 0.], [0., 2.]]', '[[1., 1e-12], [0., 1.]]']:
    for e in ['torch.linalg.det(x)', 'torch.linalg.slogdet(x)[1]', 'torch.linalg.svdvals(x)', 'torch.linalg.eigvalsh(x + x.mT)',
              'torch.linalg.pinv(x)', 'torch.linalg.matrix_norm(x, "nuc")', 'torch.linalg.matrix_norm(x, 2)', 'torch.linalg.norm(x)',
              'torch.linalg.eigh(x + x.mT)[1].abs()', 'torch.linalg.svd(x)[0].abs()', 'torch.linalg.inv(x)', 'torch.linalg.qr(x)[1]',
              'torch.linalg.matrix_rank(x).double() * x.sum()', 'torch.linalg.cond(x)', 'torch.logdet(x)', 'torch.linalg.cholesky(x)']:
        CASES.append(f'x = torch.tensor({m}, dtype=torch.float64, requires_grad=True)⏎r = G({e}, x)')

if __name__ == '__main__':
    for c in CASES:
        print('from h9 import *⏎inf = float("inf")⏎nan = float("nan")⏎' + c)
