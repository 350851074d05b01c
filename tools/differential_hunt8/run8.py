"""Run a snippet list with the seventh hunt's drive.py (workers, torch cache), comparing floats within a few
ulp instead of drive.py's 1e-5: signed zeros, NaN/inf positions, dtypes, shapes and exception classes exactly.
Usage: KILN_PATH=bazel-bin DIFF7_DIR=/tmp/diff8 run8.py SNIPFILE [--strides]  -> prints disagreements."""
import sys, os, math

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'differential_hunt7'))
import drive  # noqa: E402

ULP = {'float16': 2.0 ** -10, 'bfloat16': 2.0 ** -7, 'float32': 2.0 ** -23, 'float64': 2.0 ** -52}
TINY = {'float16': 2.0 ** -14, 'bfloat16': 2.0 ** -126, 'float32': 2.0 ** -126, 'float64': 2.0 ** -1022}
NULP = int(os.environ.get('NULP', '4'))


def fclose(x, y, dt):
    if x == y:
        return True
    if not (isinstance(x, tuple) and isinstance(y, tuple)):
        return False  # nan vs number
    if x[0] == 0 and y[0] == 0:
        return False  # signed zeros differ
    if math.isinf(x[0]) or math.isinf(y[0]):
        return False
    u, t = ULP.get(dt, 0.0), TINY.get(dt, 0.0)
    return abs(x[0] - y[0]) <= NULP * u * max(abs(y[0]), t)


def close(a, b):
    if type(a) != type(b):
        return False
    if isinstance(a, tuple):
        if len(a) != len(b):
            return False
        if len(a) == 6 and a[0] == 'T' and b[0] == 'T':
            if a[:5] != b[:5]:
                return False
            return all(fclose(x, y, a[1]) for x, y in zip(a[5], b[5]))
        if len(a) == 2 and a[0] == 'f':
            return a == b or fclose(a[1], b[1], 'float64')
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
    os.makedirs(os.environ.setdefault('DIFF7_DIR', '/tmp/diff8'), exist_ok=True)
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
            continue  # torch died (its SIGFPE on INT_MIN // -1)
        bad += 1
        print(f'--- [{i}] {s}\n  torch: {str(t)[:600]}\n  kiln : {str(k)[:600]}')
    print(f'TOTAL {len(snips)} snippets, {bad} disagree')
