out = []
mats = {
 'sing': "A = torch.tensor([[1., 2.], [2., 4.]])",
 'zero': "A = torch.zeros(3, 3)",
 'empty': "A = torch.empty(0, 0)",
 'bempty': "A = torch.empty(2, 0, 0)",
 'batch': "A = torch.arange(18.).reshape(2, 3, 3) + torch.eye(3)",
 'rect': "A = torch.arange(6.).reshape(2, 3)",
 'int': "A = torch.eye(3, dtype=torch.int64)",
 'nan': "A = torch.tensor([[1., float('nan')], [0., 1.]])",
 'f64': "A = torch.tensor([[4., 1.], [1., 3.]], dtype=torch.float64)",
 'h': "A = torch.eye(2).half()",
 'v': "A = torch.ones(3)",
 'nc': "A = (torch.arange(9.).reshape(3, 3) + 3 * torch.eye(3)).t()",
}
fns = ["torch.linalg.inv(A)", "torch.linalg.inv_ex(A)", "torch.linalg.det(A)", "torch.det(A)", "torch.linalg.slogdet(A)", "torch.logdet(A)", "torch.linalg.solve(A, torch.ones(A.shape[-1] if A.dim() else 1))", "torch.linalg.cholesky(A)", "torch.linalg.cholesky_ex(A)", "torch.linalg.qr(A)", "torch.linalg.qr(A, mode='r')", "torch.linalg.qr(A, mode='bogus')", "torch.linalg.eigh(A)", "torch.linalg.eigvalsh(A)", "torch.linalg.eigvalsh(A, UPLO='X')", "torch.linalg.svd(A)", "torch.linalg.svd(A, full_matrices=False)", "torch.linalg.svdvals(A)", "torch.linalg.matrix_rank(A)", "torch.linalg.matrix_rank(A, tol=0.5)", "torch.linalg.matrix_rank(A, hermitian=True)", "torch.linalg.pinv(A)", "torch.linalg.pinv(A, hermitian=True)", "torch.linalg.matrix_norm(A)", "torch.linalg.matrix_norm(A, ord=2)", "torch.linalg.matrix_norm(A, ord='nuc')", "torch.linalg.matrix_norm(A, ord=-1)", "torch.linalg.matrix_norm(A, ord=3)", "torch.linalg.norm(A)", "torch.linalg.norm(A, ord=2)", "torch.linalg.norm(A, ord='fro', dim=(0,))", "torch.linalg.cond(A)", "torch.linalg.cond(A, 'fro')", "torch.linalg.matrix_power(A, 0)", "torch.linalg.matrix_power(A, -1)", "torch.linalg.matrix_power(A, 3)", "torch.linalg.matrix_exp(A)", "torch.linalg.lstsq(A, torch.ones(A.shape[:-1] + (1,)) if A.dim() >= 2 else A).solution", "torch.linalg.lu_factor(A)", "torch.linalg.lu(A)", "torch.linalg.vector_norm(A, 0.5)", "torch.linalg.multi_dot([A, A])", "torch.linalg.householder_product(A, torch.ones(1))", "torch.linalg.cross(A, A)", "torch.linalg.diagonal(A)", "torch.linalg.vecdot(A, A)", "torch.linalg.tensorinv(A, 1)", "torch.linalg.solve_triangular(A, torch.eye(A.shape[-1] if A.dim() else 1), upper=True)", "torch.inverse(A)", "torch.pinverse(A)", "torch.matrix_power(A, 2)", "torch.trace(A)", "torch.triu(A, 1)", "torch.tril(A, -5)", "torch.diag(A)", "torch.diagonal(A, 1)", "torch.mm(A, A)", "torch.matmul(A, A)", "A @ A", "torch.outer(A.flatten(), A.flatten()).shape", "torch.kron(A, A).shape", "torch.cholesky_solve(torch.ones(A.shape[-2:]), A)", "torch.linalg.eig(A)[0].real", "torch.linalg.eigvals(A).real"]
for k, a in mats.items():
    for f in fns:
        out.append(f"{a}; r = {f}")
print('\n'.join(out))
