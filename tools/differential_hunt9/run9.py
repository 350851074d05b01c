"""Run a snippet list with the seventh hunt's drive.py (crash-safe workers, TORCH_CACHE) and compare:
exception classes, dtypes, shapes, requires_grad, None-ness exactly; float values within RTOL (default 1e-8)
of the largest magnitude in the same tensor (at least 1), NaN/inf positions exactly. Gradients computed in
another (correct) summation order differ by a few ulp times the number of terms (<= 1e3 here) times the
condition number of the linalg inputs (< 1e3): far under 1e-8, while a wrong formula is off by O(1).
Usage: KILN_PATH=bazel-bin:tools/differential_hunt9 DIFF7_DIR=/tmp/diff9 run9.py SNIPFILE [--strides]"""
import sys, os, math

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'differential_hunt7'))
import drive  # noqa: E402

RTOL = float(os.environ.get('RTOL', '1e-8'))
RTOL32 = float(os.environ.get('RTOL32', '1e-5'))  # float32 values: a few of its ulp (1.2e-7) times the terms


def tclose(a, b):
    if a[:5] != b[:5]:
        return False
    fin = [abs(y[0]) for y in b[5] if isinstance(y, tuple) and not math.isinf(y[0])]
    scale = max([1.0] + fin)
    rtol = RTOL if a[1] == 'float64' else RTOL32
    for x, y in zip(a[5], b[5]):
        if x == y:
            continue
        if not (isinstance(x, tuple) and isinstance(y, tuple)):
            return False
        if math.isinf(x[0]) or math.isinf(y[0]):
            return False
        if abs(x[0] - y[0]) > rtol * scale:
            return False
    return True


def close(a, b):
    if type(a) != type(b):
        return False
    if isinstance(a, tuple):
        if len(a) != len(b):
            return False
        if len(a) == 6 and a[0] == 'T' and b[0] == 'T':
            return tclose(a, b)
        if len(a) == 2 and a[0] == 'f' and isinstance(a[1], tuple) and isinstance(b[1], tuple):
            return abs(a[1][0] - b[1][0]) <= RTOL * max(1, abs(b[1][0]))
        return all(close(x, y) for x, y in zip(a, b))
    return a == b


def strip(x):
    if isinstance(x, tuple):
        if len(x) == 6 and x and x[0] == 'T':
            return x[:3] + (None,) + x[4:]
        return tuple(strip(y) for y in x)
    return x


if __name__ == '__main__':
    sf = sys.argv[1]
    strides = '--strides' in sys.argv
    os.makedirs(os.environ.setdefault('DIFF7_DIR', '/tmp/diff9'), exist_ok=True)
    drive.__file__ = os.path.abspath(drive.__file__)
    sys.argv = [drive.__file__, sf]
    snips = [l.rstrip('\n').replace('⏎', '\n') for l in open(sf, encoding='utf-8') if l.strip()]
    tag = os.path.basename(sf)
    T = drive.run_all('torch', snips, tag)
    K = drive.run_all('kiln', snips, tag)
    bad = 0
    for i, s in enumerate(snips):
        t, k = T.get(i), K.get(i)
        if t is None or k is None:
            print('MISSING', i, s)
            continue
        if t[0] == 'raised' and k[0] == 'raised':
            if t[1] == k[1]:
                continue
        elif t[0] == 'ok' and k[0] == 'ok':
            a, b = (k[1], t[1]) if strides else (strip(k[1]), strip(t[1]))
            if close(a, b):
                continue
        elif t[0] == 'crash' and k[0] != 'crash':
            continue
        bad += 1
        s1 = s.replace('from h9 import *\n', '').replace('\n', ' ⏎ ')
        print(f'--- [{i}] {s1}\n  torch: {str(t)[:500]}\n  kiln : {str(k)[:500]}')
    print(f'TOTAL {len(snips)} snippets, {bad} disagree')
