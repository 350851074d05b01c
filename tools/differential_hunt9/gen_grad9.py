"""Gradient snippets of the differentiable non-pointwise ops (views, indexing, reductions, linalg,
nn.functional), first and second order. Usage: gen_grad9.py > grad.txt"""

CASES = []  # (setup lines, output expression, inputs for the gradient)


def c(setup, expr, inputs='x', order=1):
    CASES.append((setup, expr, inputs, order))


X34 = 'x = T(3, 4, seed=1)'
X234 = 'x = T(2, 3, 4, seed=1)'
NCX = 'x = NC(T(3, 4, seed=1))'
# views and shape ops
for s in (X34, NCX):
    for e in ['x.view(12)', 'x.reshape(2, 6)', 'x.t()', 'x.transpose(0, 1)', 'x.permute(1, 0)', 'x.flatten()',
              'x[None].expand(2, 3, 4)', 'x[:, :1].expand(3, 5)', 'x.expand_as(torch.ones(2, 3, 4))',
              'x.narrow(1, 1, 2)', 'x.select(1, -1)', 'x.unbind(1)', 'x.split(2, 1)', 'x.split([1, 3], 1)',
              'x.chunk(3, 1)', 'x.tensor_split(3, 1)', 'x.flip(0, 1)', 'x.fliplr()', 'x.roll(1, 1)',
              'x.roll((1, -2), (0, 1))', 'x.roll(5)', 'x.repeat(2, 1)', 'x.repeat(2, 1, 3)', 'x.tile((2,))',
              'x.unfold(1, 2, 1)', 'x.unfold(1, 2, 2)', 'x.diagonal()', 'x.diagonal(1)', 'x.diagonal(-1)',
              'x.movedim(0, 1)', 'x.unsqueeze(1).squeeze(1)', 'x.unsqueeze(-1)', 'x[:1].squeeze()',
              'x.as_strided((2, 2), (1, 2))', 'x.as_strided((3, 3), (1, 1), 1)', 'x.T', 'x.mT',
              'x.view_as(torch.ones(4, 3))', 'x.contiguous()', 'x.clone()', 'x.unflatten(1, (2, 2))',
              'x.swapaxes(0, 1)', 'x.ravel()', 'x.triu()', 'x.tril(-1)', 'x.rot90()', 'x.rot90(2, (0, 1))',
              'torch.diag(x)', 'torch.diag(x[0])', 'torch.diag_embed(x)', 'torch.diagflat(x)', 'x.trace()',
              'torch.block_diag(x, x[:1])', 'torch.cartesian_prod(x[0], x[1])', 'x.vsplit(3)', 'x.hsplit(2)',
              'torch.atleast_3d(x)', 'x.expand(2, 3, 4).sum(0)', 'x.unfold(0, 2, 1).unfold(1, 2, 2)',
              'x.index_select(0, torch.tensor([0, 0, 2]))', 'x.masked_select(x > 0)', 'x.take(torch.tensor([0, 5, 5, 11]))']:
        c(s, e)
for e in ['x.permute(2, 0, 1)', 'x.movedim((0, 1), (2, 0))', 'x.transpose(0, 2)', 'x.diagonal(0, 1, 2)',
          'x.diagonal(1, 0, 2)', 'x.reshape(4, 6)', 'x.flatten(1)', 'x.squeeze(0)', 'x.narrow(2, 1, 3)',
          'x.unfold(2, 3, 1)', 'x.as_strided((2, 3), (12, 1), 2)', 'x.flip(-1)', 'x.roll(1, 0)', 'x[..., 1]',
          'x[:, None, ..., ::2]', 'x[1:, :, -1]', 'x[[0, 1, 1]]', 'x[:, [0, 2, 0]]', 'x[:, [[0, 1], [2, 2]]]',
          'x[[0, 1], [2, 2]]', 'x[[1, 1], :, [0, 0]]', 'x[x > 0.5]', 'x[x[:, :, 0] > 0]', 'x[..., torch.tensor([3, 3])]',
          'x[torch.tensor(1)]', 'x[0, 1, 2]', 'x[None, 1, ..., None]', 'x[1][2][3]', 'x[:, 1:3][..., [0, 0, 1]]',
          'x[torch.tensor([True, False])]', 'x[..., 1::2]']:
    c(X234, e)
for e in ['x.view(12)', 'x.t()', 'x.repeat(2, 2)', 'x.roll(1, 1)', 'x.flip(1)', 'x[:, [0, 0]]', 'x.unfold(1, 2, 1)',
          'x.diagonal()', 'x.as_strided((2, 2), (1, 2))', 'x.expand(2, 3, 4)', 'x.take(torch.tensor([1, 1]))']:
    c(X34, f'({e}) ** 2', order=2)

# indexing family
I = 'idx = torch.tensor([[0, 1, 2, 0], [2, 2, 1, 0], [1, 0, 0, 2]])'
for e in ['x.gather(0, idx)', 'x.gather(1, idx % 4)', 'torch.take_along_dim(x, idx, 0)',
          'torch.take_along_dim(x, x.argsort(1), 1)', 'torch.take_along_dim(x, idx[:, :1] % 4)',
          'x.scatter(0, idx, y)', 'x.scatter_add(0, idx, y)', 'x.scatter(0, idx, 2.5)',
          "x.scatter_reduce(0, idx, y, 'sum')", "x.scatter_reduce(0, idx, y, 'prod')",
          "x.scatter_reduce(0, idx, y, 'mean')", "x.scatter_reduce(0, idx, y, 'amax')",
          "x.scatter_reduce(0, idx, y, 'amin')", "x.scatter_reduce(0, idx, y, 'sum', include_self=False)",
          "x.scatter_reduce(0, idx, y, 'mean', include_self=False)", "x.scatter_reduce(0, idx, y, 'amax', include_self=False)",
          "x.scatter_reduce(0, idx, y, 'prod', include_self=False)",
          "x.scatter(0, idx, y, reduce='add')", "x.scatter(0, idx, y, reduce='multiply')",
          'x.index_add(0, torch.tensor([2, 0, 2]), y)', 'x.index_add(0, torch.tensor([2, 0, 2]), y, alpha=-2)',
          'x.index_copy(0, torch.tensor([2, 0, 1]), y)', 'x.index_fill(1, torch.tensor([1, 1, 3]), -1.0)',
          'x.index_put((torch.tensor([0, 0, 2]), torch.tensor([1, 1, 3])), y[0, :3], accumulate=True)',
          'x.index_put((torch.tensor([0, 1, 2]), torch.tensor([1, 1, 3])), y[0, :3])',
          'x.index_put((torch.tensor([0, 2]),), y[:2], accumulate=True)',
          'x.masked_fill(x > 0, 0.5)', 'x.masked_fill(x > 0, y[0, 0])', 'x.masked_scatter(x > 0, y)',
          'torch.where(x > 0, x, y)', 'torch.where(x > 0, x, 0.)', 'torch.where(x > 0, y[0], x)',
          'x.put(torch.tensor([1, 1, 5]), y[0, :3])', 'x.put(torch.tensor([1, 1, 5]), y[0, :3], accumulate=True)',
          'x.index_select(1, torch.tensor([3, 3, 0]))',
          'x.masked_select(y > 0)', 'x.masked_fill(torch.tensor([True, False, True, False]), 1.0)']:
    c(f'{X34}⏎y = T(3, 4, seed=2)⏎{I}', e, 'x, y')
for e in ['x.index_add(0, torch.tensor([2, 0, 2]), y)', 'x.scatter_add(0, idx, y)', 'torch.where(x > 0, x * y, y * y)',
          "x.scatter_reduce(0, idx, y, 'prod')", "x.scatter_reduce(0, idx, y, 'amax')", 'x.masked_scatter(x > 0, y)',
          'x.gather(0, idx) * y']:
    c(f'{X34}⏎y = T(3, 4, seed=2)⏎{I}', f'({e}) ** 2', 'x, y', order=2)
# in-place indexing on a non-leaf, setitem
for e in ['z = x * 1⏎z[0] = y[0]⏎', 'z = x * 1⏎z[:, 1] = 3.0⏎', 'z = x * 1⏎z[z > 0] = 0⏎',
          'z = x * 1⏎z[z > 0] = y[z > 0]⏎', 'z = x * 1⏎z[[0, 0], [1, 1]] = y[0, :2]⏎',
          'z = x * 1⏎z.index_put_((torch.tensor([0, 0]),), y[:2], accumulate=True)⏎',
          'z = x * 1⏎z[1:, ::2] += y[1:, ::2]⏎', 'z = x * 1⏎z.t()[0] *= y[0, :3]⏎',
          'z = x.clone()⏎z.masked_fill_(y > 0, 2.0)⏎', 'z = x.clone()⏎z.scatter_add_(1, torch.tensor([[0, 0]] * 3), y[:, :2])⏎',
          'z = x.clone()⏎z.diagonal().mul_(y[0, :3])⏎',
          'z = x.clone()⏎z.narrow(1, 0, 2).copy_(y[:, 2:])⏎', 'z = x * 1⏎z[..., None][1] = 5.0⏎',
          'z = x.clone()⏎z.view(12)[::5].mul_(2)⏎', 'z = x.clone()⏎z.transpose(0, 1).index_fill_(0, torch.tensor([1]), 0.)⏎',
          'z = x.clone()⏎z.clamp_(min=0)⏎z.squeeze_()⏎', 'z = x.clone()⏎z.t_()⏎z.unsqueeze_(0)⏎']:
    c(f'{X34}⏎y = T(3, 4, seed=2)⏎' + e.rstrip('⏎'), 'z', 'x, y')

# joining
for e in ['torch.cat([x, y])', 'torch.cat([x, y], 1)', 'torch.cat([x, x, y], -1)', 'torch.stack([x, y])',
          'torch.stack([x, y], 2)', 'torch.hstack([x, y])', 'torch.vstack([x, y[:1]])', 'torch.dstack([x, y])',
          'torch.cat([x, torch.empty(0, dtype=torch.float64)])', 'torch.column_stack([x, y])',
          'torch.broadcast_tensors(x, y[:1])', 'torch.meshgrid(x[0], y[0], indexing="ij")', 'torch.cat([x[:, :2], y.t()[:2].t()], 1)']:
    c(f'{X34}⏎y = T(3, 4, seed=2)', e, 'x, y')

# reductions
TIES = 'x = torch.tensor([[1., 3., 3., 0.], [2., 2., 2., 2.], [0., -1., 5., -1.]], dtype=torch.float64, requires_grad=True)'
ZER = 'x = torch.tensor([[1., 0., 3., 2.], [0., 2., 0., 2.], [1.5, -1., 5., -1.]], dtype=torch.float64, requires_grad=True)'
for s in (X34, TIES, ZER, NCX):
    for e in ['x.sum()', 'x.sum(1)', 'x.sum((0, 1), keepdim=True)', 'x.mean(0)', 'x.mean(-1, True)', 'x.prod()',
              'x.prod(1)', 'x.prod(0, True)', 'x.max()', 'x.min()', 'x.max(1)', 'x.min(0, keepdim=True)',
              'x.amax(1)', 'x.amin((0, 1))', 'x.amax(0)', 'x.median()', 'x.median(1)', 'x.nanmedian(0)',
              'x.kthvalue(2, 1)', 'x.kthvalue(1, 0, True)', 'x.topk(2, 1)', 'x.topk(2, 0, largest=False)',
              'x.sort(1)', 'x.sort(0, descending=True)', 'x.sort(1, stable=True)', 'x.msort()', 'x.cummax(1)',
              'x.cummin(0)', 'x.cumsum(1)', 'x.cumprod(1)', 'x.cumprod(0)', 'x.logcumsumexp(1)',
              'x.logsumexp(1)', 'x.logsumexp((0, 1))', 'x.norm()', 'x.norm(dim=1)', 'x.norm(1, 1)',
              'x.norm(float("inf"), 1)', 'x.norm(3, 0)', 'torch.linalg.vector_norm(x, 0.5, 1)',
              'torch.linalg.vector_norm(x, -float("inf"))', 'x.var()', 'x.var(1)', 'x.std(0)', 'x.std(1, unbiased=False)',
              'x.var(1, keepdim=True)', 'torch.var_mean(x, 1)',
              'torch.std_mean(x, 0)', 'torch.dist(x, x.flip(0))', 'x.nansum(1)',
              'x.nanmean(1)', 'x.mode(1)', 'x.max(1)[0] * 1', 'torch.renorm(x, 2, 0, 1.0)',
              'torch.linalg.norm(x)', 'torch.linalg.norm(x, "nuc")', 'torch.linalg.norm(x, 2)', 'torch.linalg.norm(x, -2)',
              'torch.linalg.matrix_norm(x, "fro")', 'torch.linalg.matrix_norm(x, 1)', 'torch.linalg.matrix_norm(x, -float("inf"))',
              'x.softmax(1)', 'x.log_softmax(0)', 'torch.nn.functional.softmin(x, 1)', 'x.diff(1)',
              'x.diff(dim=0, prepend=x[:1])', 'x.cov()', 'x.corrcoef()', 'torch.trapz(x)',
              'torch.cumulative_trapezoid(x)', 'x.clamp(-0.5, 0.5).sum(1)', 'x.abs().max(1)']:
        c(s, e)
for s in (X34, TIES, ZER):
    for e in ['x.prod(1)', 'x.prod()', 'x.cumprod(1)', 'x.logsumexp(1)', 'x.norm(dim=1)', 'x.var(1)', 'x.std(0)',
              'x.max(1)[0]', 'x.sort(1)[0]', 'x.softmax(1)', 'x.log_softmax(1)', 'x.cummax(1)[0]', 'x.norm()',
              'torch.linalg.vector_norm(x, 3, 1)', 'x.logcumsumexp(0)', 'torch.linalg.norm(x, "nuc")']:
        c(s, e, order=2)

# matmul family and linalg
MM = [('x = T(3, 4, seed=1)⏎y = T(4, 5, seed=2)', ['x @ y', 'torch.mm(x, y)', 'x.matmul(y)', 'torch.chain_matmul(x, y)',
                                                      'torch.linalg.multi_dot([x, y, y.t()])', 'torch.einsum("ij,jk->ik", x, y)',
                                                      'torch.einsum("ij,jk->", x, y)', 'torch.einsum("ij,jk->ki", x, y)',
                                                      'torch.einsum("ij,kj->ik", x, y.t())', 'torch.einsum("ii->i", x[:, :3])',
                                                      'torch.einsum("ij->", x)', 'torch.einsum("ij,ij->i", x, y.t()[:3])',
                                                      'torch.einsum("i,j->ij", x[0], y[0])', 'torch.kron(x, y)',
                                                      'torch.tensordot(x, y, 1)', 'torch.tensordot(x, y.t(), ([1], [1]))',
                                                      'torch.addmm(y[:3, :3], x, y[:, :3], beta=0.5, alpha=2)',
                                                      'torch.inner(x, y.t())', 'torch.outer(x[0], y[0])',
                                                      'x.t() @ x[:, :3]', 'torch.mv(x, y[:, 0])', 'x[0] @ y', 'x[0] @ y[:, 0]',
                                                      'torch.dot(x[0], y[:, 0])', 'torch.vdot(x[0], y[:, 1])',
                                                      'torch.addmv(y[0, :3], x, y[:, 1])', 'torch.addr(x, x[:, 0], y[0, :4])',
                                                      'torch.cdist(x, y.t())', 'torch.cdist(x, y.t(), p=1)', 'torch.cdist(x, x)',
                                                      'torch.nn.functional.linear(x, y.t(), y[0])', 'torch.nn.functional.linear(x, y.t())',
                                                      'torch.cross(x[:, :3], y.t()[:3, :3], dim=1)', 'torch.linalg.cross(x[:, :3], y.t()[:3, :3])']),
      ('x = T(2, 3, 4, seed=1)⏎y = T(4, 5, seed=2)', ['x @ y', 'torch.einsum("bij,jk->bik", x, y)',
                                                         'torch.einsum("bij,jk->bk", x, y)', 'torch.einsum("...j,jk", x, y)',
                                                         'x @ y[:, 0]', 'torch.tensordot(x, y, ([2], [0]))']),
      ('x = T(2, 3, 4, seed=1)⏎y = T(2, 4, 5, seed=2)', ['torch.bmm(x, y)', 'x @ y', 'torch.baddbmm(x[:, :, :3] @ x.transpose(1, 2), x, x.transpose(1, 2))',
                                                            'torch.einsum("bij,bjk->bik", x, y)', 'torch.addbmm(y[0, :3], x, y)',
                                                            'x @ y[:1]', 'x[:1] @ y']),
      ('x = T(2, 1, 3, 4, seed=1)⏎y = T(3, 4, 2, seed=2)', ['x @ y', 'torch.matmul(x, y[0])', 'x.transpose(-1, -2)[..., :3] @ y[:, :3]'])]
for s, es in MM:
    for e in es:
        c(s, e, 'x, y')
    for e in es[:4]:
        c(s, f'({e}) ** 2', 'x, y', order=2)
LIN = ['torch.linalg.inv(x)', 'torch.inverse(x)', 'torch.linalg.det(x)', 'torch.det(x)', 'torch.logdet(x @ x.mT)',
       'torch.linalg.slogdet(x)', 'torch.slogdet(x)', 'torch.linalg.solve(x, y)', 'torch.linalg.solve(x, y[..., 0])',
       'torch.linalg.solve(x.mT, y)',
       'torch.linalg.cholesky(x @ x.mT + torch.eye(3, dtype=torch.float64))',
       'torch.cholesky(x @ x.mT + torch.eye(3, dtype=torch.float64))',
       'torch.linalg.cholesky(x @ x.mT + torch.eye(3, dtype=torch.float64), upper=True)',
       'torch.cholesky_solve(y, torch.linalg.cholesky(x @ x.mT + torch.eye(3, dtype=torch.float64)))',
       'torch.cholesky_inverse(torch.linalg.cholesky(x @ x.mT + torch.eye(3, dtype=torch.float64)))',
       'torch.linalg.qr(x)', 'torch.linalg.qr(x, "r")[1]', 'torch.linalg.qr(x[..., :2])', 'torch.linalg.qr(x, "complete")',
       'torch.linalg.svdvals(x)', 'torch.linalg.svd(x, full_matrices=False)[1]',
       'torch.linalg.svd(x, full_matrices=False)[0].abs()', 'torch.svd(x)[1]', 'torch.linalg.svd(x[..., :2], full_matrices=False)[2].abs()',
       'torch.linalg.eigh(x + x.mT)[0]', 'torch.linalg.eigh(x + x.mT)[1].abs()', 'torch.linalg.eigvalsh(x + x.mT)',
       'torch.linalg.eigvalsh(x + x.mT, UPLO="U")', 'torch.linalg.pinv(x)', 'torch.linalg.pinv(x[..., :2])', 'torch.pinverse(x)',
       'torch.linalg.pinv(x + x.mT, hermitian=True)', 'torch.linalg.matrix_norm(x, 2)', 'torch.linalg.matrix_norm(x, "nuc")',
       'torch.linalg.matrix_norm(x, -2)', 'torch.linalg.cond(x)', 'torch.linalg.matrix_power(x, 3)',
       'torch.linalg.matrix_power(x, -2)', 'torch.matrix_exp(x)', 'torch.linalg.matrix_exp(x * 0.1)',
       'torch.linalg.lstsq(x, y).solution', 'torch.linalg.lu_factor(x)[0]', 'torch.linalg.lu(x)[1]', 'torch.linalg.lu(x)[2]',
       'torch.lu_solve(y, *torch.linalg.lu_factor(x))', 'torch.linalg.solve_triangular(x.triu() + 3 * torch.eye(3, dtype=torch.float64), y, upper=True)',
       'torch.triangular_solve(y, x.tril() + 3 * torch.eye(3, dtype=torch.float64), upper=False)[0]',
       'torch.linalg.inv_ex(x)[0]', 'torch.linalg.cholesky_ex(x @ x.mT + torch.eye(3, dtype=torch.float64))[0]',
       'torch.linalg.tensorinv(x.reshape(3, 3) if x.dim() == 2 else x[0], ind=1)', 'torch.linalg.vander(x[..., 0])',
       'torch.linalg.eigvals(x + x.mT).real',
       'torch.linalg.eig(x + x.mT)[0].real', 'torch.trace(x) if x.dim() == 2 else x.diagonal(0, -2, -1).sum(-1)',
       'torch.linalg.matrix_rank(x).double() + x.sum()', 'torch.linalg.slogdet(x)[1]']
for s in ('x = T(3, 3, seed=1)⏎y = T(3, 2, seed=2)', 'x = T(2, 3, 3, seed=3)⏎y = T(2, 3, 2, seed=4)',
          'x = NC(T(3, 3, seed=5))⏎y = T(3, 2, seed=6)'):
    for e in LIN:
        c(s, e, 'x, y')
for e in ['torch.linalg.inv(x)', 'torch.linalg.det(x)', 'torch.linalg.slogdet(x)[1]', 'torch.linalg.solve(x, y)',
          'torch.linalg.cholesky(x @ x.mT + torch.eye(3, dtype=torch.float64))', 'torch.linalg.qr(x)[1]',
          'torch.linalg.svdvals(x)', 'torch.linalg.eigvalsh(x + x.mT)', 'torch.linalg.pinv(x)', 'torch.matrix_exp(x * 0.1)',
          'torch.linalg.matrix_norm(x, "nuc")']:
    c('x = T(3, 3, seed=1)⏎y = T(3, 2, seed=2)', e, 'x, y', order=2)
c('x = torch.tensor([[1., 2.], [2., 4.]], dtype=torch.float64, requires_grad=True)', 'torch.linalg.det(x)')
c('x = torch.tensor([[1., 2.], [2., 4.]], dtype=torch.float64, requires_grad=True)', 'torch.det(x)', order=2)
c('x = torch.zeros(3, 3, dtype=torch.float64, requires_grad=True)', 'torch.linalg.det(x)')
c('x = torch.tensor([[1., 2., 0], [2., 4., 0], [0, 0, 1]], dtype=torch.float64, requires_grad=True)', 'torch.linalg.det(x)')
c('x = T(3, 3, seed=1)', 'torch.linalg.lstsq(x[:, :2], x[:, 2:]).solution')
c('x = T(4, 3, seed=1)⏎y = T(4, 2, seed=2)', 'torch.linalg.lstsq(x, y).solution', 'x, y')
c('x = T(4, 3, seed=1)⏎y = T(4, 2, seed=2)', 'torch.linalg.pinv(x) @ y', 'x, y')

# nn.functional
F = 'torch.nn.functional'
NN = [
    ('x = T(2, 3, 7, seed=1)⏎w = T(4, 3, 3, seed=2)⏎b = T(4, seed=3)', 'x, w, b',
     [f'{F}.conv1d(x, w, b)', f'{F}.conv1d(x, w, b, stride=2, padding=1)', f'{F}.conv1d(x, w, dilation=2)',
      f'{F}.conv1d(x, w, b, padding="same")', f'{F}.conv1d(x, w[:3, :1], b[:3], groups=3)',
      f'{F}.conv_transpose1d(x, w.transpose(0, 1), b)', f'{F}.conv_transpose1d(x, w.transpose(0, 1), b, stride=2, padding=1, output_padding=1)',
      f'{F}.conv1d(x, w, b, padding=2, stride=3)']),
    ('x = T(2, 2, 5, 6, seed=1)⏎w = T(3, 2, 3, 2, seed=2)⏎b = T(3, seed=3)', 'x, w, b',
     [f'{F}.conv2d(x, w, b)', f'{F}.conv2d(x, w, b, stride=(2, 1), padding=(1, 0))', f'{F}.conv2d(x, w, None, dilation=(1, 2))',
      f'{F}.conv2d(x, w[:2, :1], b[:2], groups=2)', f'{F}.conv_transpose2d(x, w.transpose(0, 1), b)',
      f'{F}.conv_transpose2d(x, w.transpose(0, 1), b, stride=2, padding=1, output_padding=1)',
      f'{F}.conv_transpose2d(x, w.transpose(0, 1), b, dilation=2)',
      f'{F}.conv2d(x.transpose(2, 3), w, b)', f'{F}.conv2d(x, w, b, padding="same")']),
    ('x = T(1, 2, 4, 4, 3, seed=1)⏎w = T(2, 2, 2, 2, 2, seed=2)⏎b = T(2, seed=3)', 'x, w, b',
     [f'{F}.conv3d(x, w, b)', f'{F}.conv3d(x, w, b, stride=2, padding=1)', f'{F}.conv_transpose3d(x, w, b)',
      f'{F}.conv_transpose3d(x, w, b, stride=2)']),
]
for s, ins, es in NN:
    for e in es:
        c(s, e, ins)
    c(s, f'({es[0]}) ** 2', ins, order=2)
    c(s, f'({es[1]}) ** 2', ins, order=2)
POOLX = 'x = T(2, 3, 6, 6, seed=1)'
POOLT = 'x = torch.tensor(np.floor(A(2, 3, 6, 6, seed=1) * 2), dtype=torch.float64, requires_grad=True)'
for s in (POOLX, POOLT):
    for e in [f'{F}.max_pool2d(x, 2)', f'{F}.max_pool2d(x, 3, 2, 1)', f'{F}.max_pool2d(x, 2, 1)', f'{F}.max_pool2d(x, 3, 1, dilation=2)',
              f'{F}.max_pool2d(x, 3, 2, ceil_mode=True)', f'{F}.max_pool2d(x, 2, return_indices=True)[0]',
              f'{F}.avg_pool2d(x, 2)', f'{F}.avg_pool2d(x, 3, 2, 1)', f'{F}.avg_pool2d(x, 3, 2, 1, count_include_pad=False)',
              f'{F}.avg_pool2d(x, 3, 2, ceil_mode=True)', f'{F}.avg_pool2d(x, 2, divisor_override=3)',
              f'{F}.adaptive_avg_pool2d(x, (4, 3))', f'{F}.adaptive_max_pool2d(x, (4, 3))', f'{F}.adaptive_max_pool2d(x, 1)',
              f'{F}.max_pool1d(x[0], 3, 2)', f'{F}.avg_pool1d(x[0], 3, 2, 1)', f'{F}.adaptive_avg_pool1d(x[0], 4)',
              f'{F}.adaptive_max_pool1d(x[0], 4)', f'{F}.max_pool3d(x[None], 2)', f'{F}.avg_pool3d(x[None], 2)',
              f'{F}.adaptive_avg_pool3d(x[None], 2)', f'{F}.adaptive_max_pool3d(x[None], (1, 2, 3))',
              f'{F}.lp_pool2d(x.abs() + 0.1, 2, 2)', f'{F}.lp_pool1d(x[0].abs() + 0.1, 3, 2)',
              f'{F}.max_unpool2d(*{F}.max_pool2d(x, 2, return_indices=True), 2)',
              f'{F}.max_pool2d(x.transpose(2, 3), 2)', f'{F}.max_pool2d(x.contiguous(memory_format=torch.channels_last), 2)',
              f'{F}.max_pool2d(x, (2, 3), (1, 2))']:
        c(s, e)
for e in [f'{F}.max_pool2d(x, 2)', f'{F}.avg_pool2d(x, 3, 2, 1)', f'{F}.adaptive_avg_pool2d(x, (4, 3))', f'{F}.adaptive_max_pool2d(x, (4, 3))']:
    c(POOLX, f'({e}) ** 2', order=2)
INTERP = [("x = T(2, 3, 5, seed=1)", ['size=8, mode="nearest"', 'scale_factor=2, mode="linear"', 'size=7, mode="linear", align_corners=True',
                                       'size=3, mode="linear"', 'scale_factor=1.7, mode="nearest"', 'size=9, mode="nearest-exact"',
                                       'size=4, mode="area"']),
          ("x = T(1, 2, 4, 5, seed=1)", ['size=(6, 7), mode="bilinear"', 'size=(6, 7), mode="bilinear", align_corners=True',
                                          'scale_factor=2, mode="bicubic"', 'size=(3, 8), mode="bicubic", align_corners=True',
                                          'scale_factor=(2, 3), mode="nearest"', 'size=(2, 3), mode="area"',
                                          'scale_factor=0.6, mode="bilinear"', 'size=(7, 3), mode="nearest-exact"',
                                          'scale_factor=1.5, mode="bilinear", recompute_scale_factor=True',
                                          'size=(8, 10), mode="bicubic"']),
          ("x = T(1, 2, 3, 4, 3, seed=1)", ['size=(4, 5, 6), mode="trilinear"', 'scale_factor=2, mode="nearest"',
                                             'size=(2, 2, 2), mode="area"', 'size=(5, 5, 5), mode="trilinear", align_corners=True'])]
for s, es in INTERP:
    for e in es:
        c(s, f'{F}.interpolate(x, {e})')
    c(s, f'{F}.interpolate(x, {es[1]}) ** 2', order=2)
for s, dims in (("x = T(2, 3, 5, seed=1)", 1), ("x = T(1, 2, 4, 5, seed=1)", 2), ("x = T(1, 2, 3, 4, 3, seed=1)", 3)):
    pads = {1: ['(1, 2)', '(2, 0)', '(-1, 2)'], 2: ['(1, 2, 0, 1)', '(2, 2, 2, 2)', '(1, -1, 0, 2)'], 3: ['(1, 1, 0, 1, 2, 0)', '(1,) * 6']}[dims]
    for p in pads:
        for m in ('constant', 'reflect', 'replicate', 'circular'):
            if m == 'reflect' and p == '(2, 2, 2, 2)':
                pass
            c(s, f'{F}.pad(x, {p}, mode="{m}")')
    c(s, f'{F}.pad(x, {pads[0]}, value=2.5)')
    c(s, f'{F}.pad(x, {pads[0]}, mode="reflect") ** 2', order=2)
    c(s, f'{F}.pad(x, {pads[0]}, mode="replicate") ** 2', order=2)
EMB = 'w = T(6, 3, seed=1)⏎i = torch.tensor([[0, 2, 2], [5, 0, 1]])'
for e in [f'{F}.embedding(i, w)', f'{F}.embedding(i, w, padding_idx=2)', f'{F}.embedding(i, w, padding_idx=-1)',
          f'{F}.embedding(i, w, max_norm=1.0)', f'{F}.embedding(i, w * 1, max_norm=1.0, norm_type=1.0)',
          f'{F}.embedding(i, w, scale_grad_by_freq=True)', f'{F}.embedding(i, w, sparse=False, padding_idx=0, scale_grad_by_freq=True)',
          f'{F}.embedding_bag(i, w)', f'{F}.embedding_bag(i, w, mode="sum")', f'{F}.embedding_bag(i, w, mode="max")',
          f'{F}.embedding_bag(i.flatten(), w, torch.tensor([0, 2]), mode="mean")',
          f'{F}.embedding_bag(i, w, mode="sum", per_sample_weights=torch.tensor([[1., 2, 3], [0, 1, 2]], dtype=torch.float64))',
          f'{F}.one_hot(i, 6).double() @ w']:
    c(EMB, e, 'w')
c(EMB + '⏎ww = w.detach().clone().requires_grad_()⏎' + f'{F}.embedding(i, ww, max_norm=1.0)', 'ww', 'w, ww')
NORM = 'x = T(4, 6, 3, seed=1)⏎w = T(6, seed=2)⏎b = T(6, seed=3)'
for e in [f'{F}.layer_norm(x, (3,))', f'{F}.layer_norm(x, (6, 3))', f'{F}.layer_norm(x.transpose(1, 2), (6,), w, b)',
          f'{F}.layer_norm(x, (3,), w[:3], b[:3], eps=0.1)', f'{F}.group_norm(x, 3, w, b)', f'{F}.group_norm(x, 2)',
          f'{F}.group_norm(x, 6, w, b)', f'{F}.group_norm(x, 1, w, b)',
          f'{F}.batch_norm(x, None, None, w, b, training=True)', f'{F}.batch_norm(x, None, None, training=True)',
          f'{F}.batch_norm(x, torch.zeros(6, dtype=torch.float64), torch.ones(6, dtype=torch.float64), w, b, training=True, momentum=0.3)',
          f'{F}.batch_norm(x, torch.zeros(6, dtype=torch.float64) + 0.2, torch.ones(6, dtype=torch.float64) * 2, w, b, training=False)',
          f'{F}.batch_norm(x, torch.zeros(6, dtype=torch.float64) + 0.2, torch.ones(6, dtype=torch.float64) * 2, training=False)',
          f'{F}.batch_norm(x[:, :, 0], None, None, w, b, training=True)',
          f'{F}.instance_norm(x, weight=w, bias=b)', f'{F}.instance_norm(x)',
          f'{F}.instance_norm(x, torch.zeros(6, dtype=torch.float64), torch.ones(6, dtype=torch.float64), use_input_stats=False)',
          f'{F}.local_response_norm(x, 3)', f'{F}.normalize(x, dim=1)', f'{F}.normalize(x, p=1, dim=-1)',
          f'{F}.batch_norm(x.transpose(1, 2).contiguous().transpose(1, 2), None, None, w, b, True)',
          f'{F}.softmax(x, 1)', f'{F}.softmax(x, 0)', f'{F}.log_softmax(x, -1)', f'{F}.softmax(x, 1, dtype=torch.float64)',
          f'{F}.log_softmax(x.transpose(0, 2), 1)',
          f'{F}.glu(x, 1)', f'{F}.cosine_similarity(x, x.flip(0), 1)', f'{F}.pairwise_distance(x[:, :, 0], x[:, :, 1])',
          f'{F}.pixel_shuffle(x[:, :4, :, None].expand(4, 4, 3, 2).reshape(4, 4, 3, 2), 2)',
          f'{F}.pixel_unshuffle(x[:, :, :2, None].expand(4, 6, 2, 2), 2)',
          f'{F}.unfold(x[None], 2)', f'{F}.unfold(x[None], (2, 2), dilation=1, padding=1, stride=2)',
          f'{F}.fold(x[:1, :4], (4, 3), 2)', f'{F}.fold(x.reshape(1, 12, 6), (5, 4), 2)',
          f'{F}.dropout(x, 0.0)', f'{F}.embedding(torch.tensor([1, 1]), x[0])']:
    c(NORM, e, 'x, w, b')
for e in [f'{F}.layer_norm(x, (6, 3))', f'{F}.group_norm(x, 3, w, b)', f'{F}.batch_norm(x, None, None, w, b, training=True)',
          f'{F}.batch_norm(x, torch.zeros(6, dtype=torch.float64) + 0.2, torch.ones(6, dtype=torch.float64) * 2, w, b, training=False)',
          f'{F}.instance_norm(x, weight=w, bias=b)', f'{F}.softmax(x, 1)', f'{F}.log_softmax(x, 1)', f'{F}.normalize(x, dim=1)',
          f'{F}.layer_norm(x, (3,), w[:3], b[:3])']:
    c(NORM, e, 'x, w, b', order=2)
LOSS = 'x = T(5, 4, seed=1)⏎y = T(5, 4, seed=2)⏎t = torch.tensor([0, 3, 1, 1, 2])⏎p = T(5, 4, seed=3, lo=0.05, hi=0.95)⏎cw = torch.tensor([1., 2., 0.5, 3.], dtype=torch.float64)'
for red in ('mean', 'sum', 'none'):
    for e in [f'{F}.cross_entropy(x, t, reduction="{red}")', f'{F}.cross_entropy(x, t, weight=cw, reduction="{red}")',
              f'{F}.cross_entropy(x, t, ignore_index=1, reduction="{red}")', f'{F}.cross_entropy(x, t, weight=cw, ignore_index=1, reduction="{red}")',
              f'{F}.cross_entropy(x, t, label_smoothing=0.2, reduction="{red}")',
              f'{F}.cross_entropy(x, t, weight=cw, label_smoothing=0.3, reduction="{red}")',
              f'{F}.cross_entropy(x, t, weight=cw, label_smoothing=0.3, ignore_index=3, reduction="{red}")',
              f'{F}.cross_entropy(x, y.softmax(1), reduction="{red}")', f'{F}.cross_entropy(x, y.softmax(1), label_smoothing=0.1, reduction="{red}")',
              f'{F}.cross_entropy(x, y.softmax(1), weight=cw, reduction="{red}")',
              f'{F}.nll_loss(x.log_softmax(1), t, reduction="{red}")', f'{F}.nll_loss(x, t, weight=cw, ignore_index=0, reduction="{red}")',
              f'{F}.nll_loss(x.t()[None], t[:4][None], reduction="{red}")',
              f'{F}.cross_entropy(x.reshape(5, 4, 1, 1).expand(5, 4, 2, 3), t[:, None, None].expand(5, 2, 3), reduction="{red}")',
              f'{F}.mse_loss(x, y, reduction="{red}")', f'{F}.l1_loss(x, y, reduction="{red}")',
              f'{F}.smooth_l1_loss(x, y, reduction="{red}", beta=0.5)', f'{F}.huber_loss(x, y, reduction="{red}", delta=0.7)',
              f'{F}.binary_cross_entropy(p, y.sigmoid(), reduction="{red}")', f'{F}.binary_cross_entropy(p, y.sigmoid(), weight=cw, reduction="{red}")',
              f'{F}.binary_cross_entropy_with_logits(x, y.sigmoid(), reduction="{red}")',
              f'{F}.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=cw, weight=cw[:1], reduction="{red}")',
              f'{F}.kl_div(x.log_softmax(1), p, reduction="{red}")', f'{F}.kl_div(x, y, log_target=True, reduction="{red}")',
              f'{F}.poisson_nll_loss(x, p, reduction="{red}")', f'{F}.poisson_nll_loss(p, p, log_input=False, full=True, reduction="{red}")',
              f'{F}.gaussian_nll_loss(x, y, p, reduction="{red}")', f'{F}.hinge_embedding_loss(x, y.sign(), reduction="{red}")',
              f'{F}.soft_margin_loss(x, y.sign(), reduction="{red}")', f'{F}.multilabel_soft_margin_loss(x, (y > 0).double(), reduction="{red}")',
              f'{F}.multi_margin_loss(x, t, reduction="{red}")', f'{F}.multi_margin_loss(x, t, p=2, margin=0.5, weight=cw, reduction="{red}")',
              f'{F}.multilabel_margin_loss(x, torch.tensor([[3, 0, -1, 1]] * 5), reduction="{red}")',
              f'{F}.margin_ranking_loss(x[:, 0], y[:, 0], y[:, 1].sign(), reduction="{red}")',
              f'{F}.cosine_embedding_loss(x, y, y[:, 0].sign(), reduction="{red}")',
              f'{F}.triplet_margin_loss(x, y, p, reduction="{red}")', f'{F}.triplet_margin_with_distance_loss(x, y, p, reduction="{red}")',
              f'{F}.ctc_loss(x.reshape(5, 1, 4).log_softmax(2), torch.tensor([[1, 2]]), torch.tensor([5]), torch.tensor([2]), reduction="{red}")',
              f'{F}.ctc_loss(x.reshape(5, 1, 4).log_softmax(2).expand(5, 2, 4), torch.tensor([[1, 1, 2], [3, 0, 0]]), torch.tensor([5, 4]), torch.tensor([3, 1]), reduction="{red}")',
              f'{F}.ctc_loss(x.reshape(5, 1, 4).log_softmax(2), torch.tensor([[1, 1, 1]]), torch.tensor([5]), torch.tensor([3]), reduction="{red}", zero_infinity=True)']:
        c(LOSS, e, 'x, y, p')
for e in [f'{F}.cross_entropy(x, t)', f'{F}.cross_entropy(x, t, weight=cw, label_smoothing=0.3)', f'{F}.cross_entropy(x, y.softmax(1))',
          f'{F}.nll_loss(x.log_softmax(1), t, weight=cw)', f'{F}.mse_loss(x, y)', f'{F}.smooth_l1_loss(x, y, beta=0.5)',
          f'{F}.binary_cross_entropy(p, y.sigmoid())', f'{F}.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=cw)',
          f'{F}.kl_div(x.log_softmax(1), p)', f'{F}.ctc_loss(x.reshape(5, 1, 4).log_softmax(2), torch.tensor([[1, 2]]), torch.tensor([5]), torch.tensor([2]))',
          f'{F}.huber_loss(x, y)', f'{F}.soft_margin_loss(x, y.sign())', f'{F}.poisson_nll_loss(x, p)', f'{F}.gaussian_nll_loss(x, y, p)']:
    c(LOSS, e, 'x, y, p', order=2)
GS = 'x = T(1, 2, 4, 5, seed=1)⏎g = T(1, 3, 3, 2, seed=2, lo=-1.1, hi=1.1)'
for m in ('bilinear', 'nearest', 'bicubic'):
    for pm in ('zeros', 'border', 'reflection'):
        for ac in (False, True):
            c(GS, f'{F}.grid_sample(x, g, mode="{m}", padding_mode="{pm}", align_corners={ac})', 'x, g')
c('x = T(1, 2, 3, 4, 5, seed=1)⏎g = T(1, 2, 3, 2, 3, seed=2, lo=-1.1, hi=1.1)', f'{F}.grid_sample(x, g, align_corners=False)', 'x, g')
c('x = T(1, 2, 3, 4, 5, seed=1)⏎g = T(1, 2, 3, 2, 3, seed=2, lo=-1.1, hi=1.1)', f'{F}.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=True)', 'x, g')
c('t = T(2, 2, 3, seed=1)', f'{F}.affine_grid(t, (2, 1, 4, 5), align_corners=False)', 't')
c('t = T(2, 2, 3, seed=1)', f'{F}.affine_grid(t, (2, 1, 4, 5), align_corners=True)', 't')
c('t = T(1, 3, 4, seed=1)', f'{F}.affine_grid(t, (1, 1, 2, 3, 4), align_corners=False)', 't')
c(GS, f'{F}.grid_sample(x, g, align_corners=False) ** 2', 'x, g', order=2)
# nn layers with weights
for e in ['torch.nn.functional.prelu(x, w[:1])', 'torch.nn.functional.prelu(x.transpose(0, 1), w)',
          'torch.nn.functional.hardtanh(x, -0.5, 0.5)', 'torch.nn.functional.rrelu(x, training=False)',
          'torch.nn.functional.threshold(x, 0.1, 2.0)']:
    c(NORM, e, 'x, w')


def emit(setup, expr, inputs, order):
    fn = 'G2' if order == 2 else 'G'
    return f'from h9 import *⏎{setup}⏎r = {fn}({expr}, {inputs})'


if __name__ == '__main__':
    seen = set()
    for case in CASES:
        line = emit(*case)
        if line not in seen:
            seen.add(line)
            print(line)
