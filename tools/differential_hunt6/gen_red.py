out = []
xs = {
 'f': "x = torch.arange(24.).reshape(2, 3, 4) - 7",
 't': "x = (torch.arange(24.).reshape(4, 3, 2) - 7).permute(2, 1, 0)",
 'e': "x = torch.empty(2, 0, 3)",
 'z': "x = torch.tensor(2.5)",
 'i': "x = torch.arange(24, dtype=torch.int32).reshape(2, 3, 4) - 7",
 'b': "x = torch.arange(24).reshape(2, 3, 4) % 3 == 0",
 'h': "x = (torch.arange(24.).reshape(2, 3, 4) - 7).half()",
 'n': "x = torch.tensor([[1., float('nan'), 3.], [float('inf'), -float('inf'), 0.]])",
}
dims = ["0", "-1", "(0, 2)", "(-1, 0)", "(0, 0)", "()", "[]", "(1,)", "3", "-4", "(0, -3)", "None", "[-1, -2]"]
fns = ['sum', 'mean', 'prod', 'amax', 'amin', 'std', 'var', 'logsumexp', 'nansum', 'nanmean', 'norm', 'count_nonzero', 'any', 'all', 'max', 'min', 'argmax', 'argmin', 'median', 'nanmedian', 'mode', 'cumsum', 'cumprod', 'logcumsumexp', 'aminmax', 'std_mean', 'var_mean', 'softmax', 'log_softmax', 'unique_consecutive']
for xk, x in xs.items():
    for f in fns:
        out.append(f"{x}; r = torch.{f}(x)")
        out.append(f"{x}; r = x.{f}()")
        for d in dims:
            out.append(f"{x}; r = torch.{f}(x, {d})")
            out.append(f"{x}; r = torch.{f}(x, dim={d}, keepdim=True)")
            out.append(f"{x}; r = x.{f}(dim={d})")
        for dt in ['torch.float64', 'torch.int64', 'torch.bool', 'torch.float16']:
            out.append(f"{x}; r = torch.{f}(x, dtype={dt})")
            out.append(f"{x}; r = torch.{f}(x, 0, dtype={dt})")
    for extra in ["unbiased=False", "correction=0", "correction=2", "unbiased=True, keepdim=True"]:
        for f in ['std', 'var', 'std_mean', 'var_mean']:
            out.append(f"{x}; r = torch.{f}(x, 1, {extra})")
            out.append(f"{x}; r = x.{f}({extra})")
    for p in ["1", "2", "0", "inf", "-inf", "'fro'", "'nuc'", "3.5"]:
        out.append(f"{x}; r = torch.norm(x, p={p})")
        out.append(f"{x}; r = torch.norm(x, p={p}, dim=(0, 1))")
        out.append(f"{x}; r = torch.linalg.vector_norm(x, ord={p})")
        out.append(f"{x}; r = torch.linalg.vector_norm(x, {p}, dim=-1, keepdim=True)")
    out.append(f"{x}; r = torch.sum(x, dim='a')")
    out.append(f"{x}; r = torch.sum(x, 1.0)")
    out.append(f"{x}; r = x.sum(0, True)")
    out.append(f"{x}; r = x.sum(axis=0, keepdims=True)")
    out.append(f"{x}; r = x.max(0, True)")
    out.append(f"{x}; r = x.topk(2)")
    out.append(f"{x}; r = x.topk(0, dim=0)")
    out.append(f"{x}; r = x.kthvalue(1, 0)")
    out.append(f"{x}; r = x.sort(dim=0, descending=True, stable=True)")
    out.append(f"{x}; r = x.argsort(dim=-1, descending=True)")
    out.append(f"{x}; r = torch.quantile(x.double() if x.dtype != torch.bool else x, 0.5)")
    out.append(f"{x}; r = x.float().quantile(torch.tensor([0.25, 0.75]), dim=0, keepdim=True)")
print('\n'.join(out))
