"""Run snippets (one per line) under torch or kiln in crash-safe workers; compare outcomes.
Usage: drive.py SNIPFILE  -> prints disagreements."""
import sys, os, math, pickle, subprocess, json

def encode(r, depth=0):
    import numpy as np
    mod = type(r).__module__ or ''
    name = type(r).__name__
    if depth > 6:
        return ('deep',)
    if hasattr(r, 'dtype') and hasattr(r, 'stride') and hasattr(r, 'detach') and not isinstance(r, np.ndarray):
        d = str(r.dtype).split('.')[-1]
        try:
            rg = bool(r.requires_grad)
            t = r.detach()
            if d in ('float16', 'bfloat16', 'float32', 'float64'):
                vals = t.double().contiguous().numpy().ravel().tolist()
                vals = tuple(('nan' if v != v else (v, math.copysign(1, v))) for v in vals)
            else:
                vals = tuple(t.contiguous().reshape(-1).tolist())
            return ('T', d, tuple(r.shape), tuple(r.stride()), rg, vals)
        except Exception as e:
            return ('Tbad', d, type(e).__name__)
    if isinstance(r, float):
        return ('f', 'nan' if r != r else (r, math.copysign(1, r)))
    if isinstance(r, (bool, int, type(None), bytes)):
        return (name, r)
    if isinstance(r, str):
        return ('s', r.replace('kiln', 'torch'))
    if name == 'Size':
        return ('Size', tuple(r))
    if name in ('dtype', 'device'):
        return (name, str(r).replace('kiln', 'torch'))
    if isinstance(r, (list, tuple)):
        return (name if name in ('list', 'tuple') else 'seq:' + name, tuple(encode(x, depth + 1) for x in r))
    if isinstance(r, dict):
        return ('dict', tuple((repr(k), encode(v, depth + 1)) for k, v in r.items()))
    if isinstance(r, np.ndarray):
        return ('nd', str(r.dtype), r.shape, r.tolist())
    if isinstance(r, np.generic):
        return ('np', str(r.dtype), r.item())
    return ('obj', name, repr(r).replace('kiln', 'torch')[:200])

def worker(lib, snips, start, outpath):
    import signal, warnings, io
    import numpy as np
    warnings.simplefilter('ignore')
    if lib == 'kiln':
        import kiln as L
    else:
        import torch as L
    f = open(outpath, 'a')
    def alarm(*a):
        raise TimeoutError('snippet timeout')
    signal.signal(signal.SIGALRM, alarm)
    for i in range(start, len(snips)):
        f.write(json.dumps([i, 'start']) + '\n'); f.flush()
        env = {'torch': L, 'np': np, 'math': math, 'inf': math.inf, 'nan': math.nan, 'io': io}
        signal.alarm(20)
        try:
            exec(snips[i], env)
            res = ('ok', encode(env.get('r')))
        except TimeoutError:
            res = ('timeout',)
        except BaseException as e:
            res = ('raised', type(e).__name__, str(e)[:160].replace('kiln', 'torch'))
        signal.alarm(0)
        try:
            L.set_default_dtype(L.float32)
            L.set_grad_enabled(True)
        except Exception:
            pass
        f.write(json.dumps([i, 'res', pickle.dumps(res).hex()]) + '\n'); f.flush()

def run_all(lib, snips, tag):
    outpath = os.path.join(os.environ.get('DIFF7_DIR', '/tmp/diff7'), f'out_{tag}_{lib}.jsonl')
    results = {}
    reuse = os.environ.get('TORCH_CACHE')  # a finished torch run of the same list: read, not rerun
    if lib == 'torch' and reuse and os.path.exists(os.path.join(reuse, f'out_{tag}_torch.jsonl')):
        for line in open(os.path.join(reuse, f'out_{tag}_torch.jsonl')):
            rec = json.loads(line)
            if rec[1] == 'res':
                results[rec[0]] = pickle.loads(bytes.fromhex(rec[2]))
        if len(results) >= len(snips) - 5:
            return results
        results = {}
    if os.path.exists(outpath): os.remove(outpath)
    start = 0
    env = dict(os.environ)
    env['PYTHONPATH'] = os.environ.get('KILN_PATH', '/tmp/ov-diff7')
    while start < len(snips):
        p = subprocess.run(['/usr/bin/python3', __file__, '--worker', lib, sys.argv[1], str(start), outpath], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        last = None
        for line in open(outpath):
            rec = json.loads(line)
            if rec[1] == 'res':
                results[rec[0]] = pickle.loads(bytes.fromhex(rec[2]))
            last = rec
        if p.returncode == 0:
            break
        # crashed on the last started snippet
        crashed = last[0]
        results[crashed] = ('crash', p.returncode, p.stderr.decode()[-300:])
        start = crashed + 1
    return results

def same(a, b):
    if a == b:
        return True
    return False

def close(a, b):
    # tolerance for floats inside tensors
    if type(a) != type(b):
        return False
    if isinstance(a, tuple):
        if len(a) != len(b): return False
        if len(a) == 6 and a and a[0] == 'T' and b[0] == 'T':
            if a[:5] != b[:5]: return False
            tol = 1e-2 if a[1] in ('float16', 'bfloat16') else (1e-5 if a[1] == 'float32' else 1e-10)
            for x, y in zip(a[5], b[5]):
                if x == y: continue
                if isinstance(x, tuple) and isinstance(y, tuple):
                    if math.isinf(x[0]) or math.isinf(y[0]): return False
                    if abs(x[0] - y[0]) > tol * max(1, abs(y[0])): return False
                    continue
                return False
            return True
        if len(a) == 2 and a[0] == 'f' and isinstance(a[1], tuple) and isinstance(b[1], tuple):
            return abs(a[1][0] - b[1][0]) <= 1e-6 * max(1, abs(b[1][0])) or a[1] == b[1]
        return all(close(x, y) for x, y in zip(a, b))
    return a == b

if __name__ == '__main__':
    if sys.argv[1] == '--worker':
        lib, sf, start, outpath = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
        snips = [l.rstrip('\n').replace('⏎', '\n') for l in open(sf, encoding='utf-8') if l.strip()]
        worker(lib, snips, start, outpath)
        sys.exit(0)
    sf = sys.argv[1]
    nostride = '--nostride' in sys.argv
    snips = [l.rstrip('\n').replace('⏎', '\n') for l in open(sf, encoding='utf-8') if l.strip()]
    tag = os.path.basename(sf)
    T = run_all('torch', snips, tag)
    K = run_all('kiln', snips, tag)
    bad = 0
    for i, s in enumerate(snips):
        t, k = T.get(i), K.get(i)
        if t is None or k is None:
            print('MISSING', i, s); continue
        if t[0] == 'raised' and k[0] == 'raised':
            if t[1] == k[1]: continue
        elif t[0] == 'ok' and k[0] == 'ok':
            a, b = k[1], t[1]
            if nostride:
                def strip(x):
                    if isinstance(x, tuple):
                        if len(x) == 6 and x and x[0] == 'T': return x[:3] + (None,) + x[4:]
                        return tuple(strip(y) for y in x)
                    return x
                a, b = strip(a), strip(b)
            if close(a, b): continue
        elif t[0] == 'crash' and k[0] != 'crash':
            continue  # torch crashed
        bad += 1
        print(f'--- [{i}] {s}\n  torch: {str(t)[:400]}\n  kiln : {str(k)[:400]}')
    print(f'TOTAL {len(snips)} snippets, {bad} disagree')
