"""Snippets where torch 1.13 has no float16/bfloat16 CPU kernel ("not implemented for 'Half'"): compare kiln's
16-bit result with torch's float32 computation on the 16-bit inputs, rounded to the 16-bit dtype (what torch
2.x's kernels and kiln do: compute in float32, round once). Usage (after run8.py LIST):
    KILN_PATH=bazel-bin DIFF7_DIR=/tmp/diff8 f16emu.py LIST RESULT   -> prints disagreements."""
import sys, os, re, json, pickle, math
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'differential_hunt7'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drive  # noqa: E402
from run8 import fclose, strip  # noqa: E402


def emulate(s):
    return re.sub(r'dtype=torch\.(float16|bfloat16)\)', r'dtype=torch.\1).float()', s)


def round16(v, dt):
    import torch
    if not isinstance(v, tuple):  # 'nan', or an integer / bool result
        return v
    r = torch.tensor(v[0], dtype=torch.float64).to(getattr(torch, dt)).double().item()
    return 'nan' if r != r else (r, math.copysign(1, r))


def compare(t, k, d16):
    """t: torch's emulated encoding, k: kiln's."""
    if isinstance(t, tuple) and len(t) == 6 and t[0] == 'T' and isinstance(k, tuple) and len(k) == 6 and k[0] == 'T':
        if t[2] != k[2]:
            return False
        if t[1] != k[1] and not (t[1] == 'float32' and k[1] in ('float16', 'bfloat16')):
            return False
        vals = [round16(v, d16) for v in t[5]]
        return all(fclose(y, x, d16) for x, y in zip(vals, k[5]))
    if isinstance(t, tuple) and isinstance(k, tuple) and len(t) == len(k):
        return all(compare(a, b, d16) for a, b in zip(t, k))
    return t == k


if __name__ == '__main__':
    lst, res = sys.argv[1], sys.argv[2]
    os.makedirs(os.environ.setdefault('DIFF7_DIR', '/tmp/diff8'), exist_ok=True)
    snips = [l.rstrip('\n').replace('⏎', '\n') for l in open(lst, encoding='utf-8') if l.strip()]
    txt = open(res).read()
    idx = [int(i) for i, t in re.findall(r"^--- \[(\d+)\] .*\n  torch: (.*)\n", txt, re.M)
           if re.search(r"not implemented for .{0,2}'?(Half|BFloat16)", t)]
    emu_path = os.path.join(os.environ['DIFF7_DIR'], os.path.basename(lst) + '.emu')
    with open(emu_path, 'w', encoding='utf-8') as f:
        for i in idx:
            f.write(emulate(snips[i]).replace('\n', '⏎') + '\n')
    emu = [l.rstrip('\n').replace('⏎', '\n') for l in open(emu_path, encoding='utf-8') if l.strip()]
    sys.argv = [drive.__file__, emu_path]
    T = drive.run_all('torch', emu, os.path.basename(emu_path))
    K = {}
    for line in open(os.path.join(os.environ['DIFF7_DIR'], f'out_{os.path.basename(lst)}_kiln.jsonl')):
        rec = json.loads(line)
        if rec[1] == 'res':
            K[rec[0]] = pickle.loads(bytes.fromhex(rec[2]))
    bad = 0
    for j, i in enumerate(idx):
        t, k = T.get(j), K.get(i)
        d16 = 'bfloat16' if 'bfloat16' in snips[i] else 'float16'
        if t and k and t[0] == 'raised' and k[0] == 'raised' and t[1] == k[1]:
            continue
        if t and k and t[0] == 'ok' and k[0] == 'ok' and compare(strip(t[1]), strip(k[1]), d16):
            continue
        bad += 1
        print(f'--- [{i}] {snips[i]}\n  torch: {str(t)[:600]}\n  kiln : {str(k)[:600]}')
    print(f'TOTAL {len(idx)} snippets without a torch 16-bit kernel, {bad} disagree with its float32 result rounded')
