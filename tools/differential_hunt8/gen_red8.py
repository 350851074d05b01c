# Reductions on the edge values of gen_pw8.py (section 0h): sum mean prod amax amin max min argmax argmin any
# all std var norm logsumexp cumsum cumprod nansum nanmean, with dim / keepdim / dtype= / out=, on 1-D rows
# of edge values, 2-D blocks (each edge value in a row of 19, so vector bodies and tails both see it),
# transposed / stepped / expanded inputs, 0-dim and empty inputs. One snippet a line.
from gen_pw8 import FL, ALL, vals, T

RED = ['sum', 'mean', 'prod', 'amax', 'amin', 'max', 'min', 'argmax', 'argmin', 'any', 'all', 'std', 'var', 'norm',
       'logsumexp', 'cumsum', 'cumprod', 'nansum', 'nanmean', 'count_nonzero', 'aminmax', 'median', 'nanmedian',
       'var_mean', 'std_mean', 'logcumsumexp', 'cummax', 'cummin']
NEEDS_DIM = {'logsumexp', 'cumsum', 'cumprod', 'logcumsumexp', 'cummax', 'cummin'}
HAS_DTYPE = {'sum', 'mean', 'prod', 'cumsum', 'cumprod', 'nansum', 'nanmean', 'norm'}


def inputs(dt):
    v = vals(dt)
    x = T(dt, v)
    pairs = [(a, b) for a in v[:8] for b in v[:8]]
    blk = f"torch.tensor([{', '.join(f'[{a}, {b}]' for a, b in pairs)}], dtype=torch.{dt})"
    return {
        'row': x,
        'pairs': blk,                                             # (64, 2): every pair of the first 8 edge values
        'rows19': f"{x}.reshape(-1, 1).expand(-1, 19).contiguous()",  # (n, 19): each value across a row
        'cols19': f"{x}.reshape(1, -1).expand(19, -1).contiguous()",  # (19, n)
        'tr': f"{blk}.t()",
        'step': f"{x}.repeat(2)[::2]",
        'exp': f"{x}.reshape(-1, 1).expand(-1, 5)",
        'zero': f"torch.tensor({v[0]}, dtype=torch.{dt})",
        'empty': f"torch.empty(0, 3, dtype=torch.{dt})",
    }


def main():
    out = []
    for op in RED:
        for dt in ALL:
            for name, x in inputs(dt).items():
                dims = [None, 0, -1, (0,), (0, 1), ()] if name not in ('row', 'step', 'zero') else [None, 0, -1]
                if name == 'empty':
                    dims = [None, 0, 1, (0, 1)]
                for d in dims:
                    if d is None and op in NEEDS_DIM:
                        continue
                    if isinstance(d, tuple) and op in ('max', 'min', 'argmax', 'argmin', 'cumsum', 'cumprod', 'median',
                                                       'nanmedian', 'logcumsumexp', 'cummax', 'cummin', 'aminmax', 'any', 'all'):
                        continue
                    if op == 'aminmax':
                        a = '' if d is None else f'dim={d}'
                    else:
                        a = '' if d is None else f'{d}'
                    out.append(f"r = torch.{op}({x}{', ' if a else ''}{a})")
                    if d is not None and op not in NEEDS_DIM - {'logsumexp'} and op not in ('count_nonzero',):
                        out.append(f"r = torch.{op}({x}, {a}, keepdim=True)")
                if op in HAS_DTYPE:
                    for odt in ['float64', 'float32', 'float16', 'int64', 'bool', 'int8']:
                        dd = '0' if op in NEEDS_DIM else None
                        args = f"{dd}, " if dd else ''
                        out.append(f"r = torch.{op}({x}, {args}dtype=torch.{odt})")
                        if name == 'pairs':
                            out.append(f"o = torch.empty(0, dtype=torch.{odt}); y = torch.{op}({x}, 0, out=o); r = (o, y is o)")
                if op in ('std', 'var') and name in ('row', 'pairs'):
                    for c in ['unbiased=False', 'correction=0', 'correction=2', 'correction=100']:
                        out.append(f"r = torch.{op}({x}, {c})" if 'unbiased' in c else f"r = torch.{op}({x}, 0, {c})")
                if op == 'norm' and name in ('row', 'pairs'):
                    for p in ['0', '1', '2', '3', 'inf', '-inf', '0.5', "'fro'", '-1']:
                        out.append(f"r = torch.norm({x}, {p})")
                        out.append(f"r = torch.linalg.vector_norm({x}, {p})" if p != "'fro'" else f"r = torch.linalg.norm({x})")
                if name == 'pairs' and op not in NEEDS_DIM and op not in ('aminmax', 'count_nonzero', 'var_mean', 'std_mean'):
                    out.append(f"r = {x}.{op}()")
                    out.append(f"r = {x}.{op}(1)")
                if name == 'pairs' and op in ('cumsum', 'cumprod'):
                    out.append(f"x = {x}; x.{op}_(0); r = x")
    return out


if __name__ == '__main__':
    print('\n'.join(main()))
