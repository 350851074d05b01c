"""Show the differing elements of snippets: show.py LIST RESULTDIR IDX [IDX ...] (reads drive.py's jsonl outputs)."""
import sys, os, json, pickle, re
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run8 import fclose
lst, d = sys.argv[1], sys.argv[2]
snips = [l.rstrip('\n') for l in open(lst, encoding='utf-8') if l.strip()]
tag = os.path.basename(lst)
def load(lib):
    res = {}
    for line in open(os.path.join(d, f'out_{tag}_{lib}.jsonl')):
        rec = json.loads(line)
        if rec[1] == 'res': res[rec[0]] = pickle.loads(bytes.fromhex(rec[2]))
    return res
T, K = load('torch'), load('kiln')
def tensors(x):
    if isinstance(x, tuple):
        if len(x) == 6 and x[0] == 'T': yield x; return
        for y in x: yield from tensors(y)
m = re.search(r'torch\.tensor\(\[([^]]*)\]', '')
for i in map(int, sys.argv[3:]):
    s = snips[i]; print('==', i, s[:200])
    ins = re.findall(r'torch\.tensor\(\[([^]]*)\]', s)
    t, k = T[i], K[i]
    if t[0] != 'ok' or k[0] != 'ok': print('  T', t[:3]); print('  K', k[:3]); continue
    for a, b in zip(tensors(t[1]), tensors(k[1])):
        if a[:3] != b[:3]: print('  meta T', a[:3], 'K', b[:3]); continue
        for j, (x, y) in enumerate(zip(a[5], b[5])):
            if not fclose(y, x, a[1]):
                inp = [v.split(', ')[j] if len(v.split(', ')) == len(a[5]) else '' for v in ins]
                print(f'   [{j}] in={inp} torch={x} kiln={y}')
