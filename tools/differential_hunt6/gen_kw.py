import torch, re, sys
sys.path.insert(0, __import__('os').environ.get('KILN_PATH', '/tmp/ov-diff6'))
import kiln
vals = {'other': 'y', 'dim': '0', 'dims': '(0,)', 'input': 'x', 'tensor': 'y', 'tensor1': 'y', 'tensor2': 'y', 'exponent': '2', 'value': '1', 'mask': 'm', 'source': 'y', 'index': 'i', 'src': 'y', 'k': '1', 'n': '2', 'p': '2', 'size': '(2, 3)', 'sizes': '(2, 3)', 'shape': '(3, 2)', 'min': '0.', 'max': '1.', 'weight': '0.5', 'end': 'y', 'mat2': 'y.t()', 'vec': 'torch.ones(3)', 'mat1': 'x', 'mat': 'x', 'vec1': 'torch.ones(2)', 'vec2': 'torch.ones(3)', 'dtype': 'torch.float64', 'alpha': '1', 'beta': '1', 'start': '0', 'length': '1', 'dim0': '0', 'dim1': '1', 'source_dim': '0', 'destination': '1', 'repeats': '2', 'chunks': '2', 'split_size': '1', 'sections': '2', 'indices_or_sections': '2', 'q': '0.5', 'decimals': '1', 'lambd': '0.5', 'threshold': '0.5', 'divisor': 'y', 'step': '1', 'offset': '0', 'diagonal': '0', 'count': '1', 'memory_format': 'torch.contiguous_format', 'obj': 'x', 'rounding_mode': "'floor'", 'eps': '1e-6', 'upper': 'False', 'largest': 'True', 'sorted': 'True', 'descending': 'False', 'stable': 'False', 'keepdim': 'False', 'unbiased': 'True', 'correction': '1', 'out_int32': 'False', 'right': 'False', 'boundaries': 'torch.tensor([0.1, 0.5])', 'sorted_sequence': 'torch.tensor([0.1, 0.5])', 'accumulate': 'False', 'indices': '(i,)', 'reduce': "'sum'", 'include_self': 'True', 'nan': '0.', 'posinf': '1.', 'neginf': '-1.', 'mode': "'reduced'", 'return_inverse': 'False', 'return_counts': 'False', 'generator': 'None', 'from': '0', 'to': '5', 'mean': '0.', 'std': '1.', 'lower': 'False', 'periodic': 'True', 'approximate': "'none'"}
methods = sorted(set(dir(torch.Tensor)) & set(dir(kiln.Tensor)))
out = []
for mname in methods:
    if mname.startswith('_'):
        continue
    doc = getattr(torch.Tensor, mname).__doc__ or ''
    m = re.match(r'\s*' + re.escape(mname) + r'\((.*?)\)\s*->', doc)
    if not m:
        continue
    params = [p.strip() for p in m.group(1).split(',') if p.strip() and p.strip() not in ('*', '/')]
    if any('*' in p for p in params):
        continue
    call_kw, ok = [], True
    for p in params:
        if '=' in p:
            name, default = [t.strip() for t in p.split('=', 1)]
            if name in vals:
                call_kw.append(f"{name}={vals[name]}")
            else:
                call_kw.append(f"{name}={default}")
        else:
            if p in vals:
                call_kw.append(f"{p}={vals[p]}")
            else:
                ok = False
    if not ok:
        continue
    base = "x = torch.arange(6.).reshape(2, 3) / 7 + 0.1; y = torch.arange(6.).reshape(2, 3) / 5 + 0.2; m = x > 0.3; i = torch.tensor([[0, 1, 0], [1, 0, 1]]); "
    if mname.endswith('_'):
        base += "x = x.clone(); "
    out.append(base + f"r = x.{mname}({', '.join(call_kw)})")
    # each keyword alone (positional for the rest)
    if call_kw:
        out.append(base + f"r = x.{mname}({', '.join(c.split('=', 1)[1] for c in call_kw)})")
print('\n'.join(out))
