"""Group run8.py disagreements by op, dtypes and kind. Usage: triage.py RESULT [--all] [--show N]
Without --all, snippets where torch 1.13 lacks a float16/bfloat16 CPU kernel ("not implemented for 'Half'")
are counted apart (see f16emu.py for those)."""
import sys, re, collections
txt = open(sys.argv[1]).read()
blocks = re.findall(r'^--- \[(\d+)\] (.*)\n  torch: (.*)\n  kiln : (.*)$', txt, re.M)
show = int(sys.argv[sys.argv.index('--show') + 1]) if '--show' in sys.argv else 0
groups = collections.defaultdict(list)
nf16 = 0
for i, s, t, k in blocks:
    if '--all' not in sys.argv and re.search(r"not implemented for .{0,2}'?(Half|BFloat16)", t):
        nf16 += 1
        continue
    s2 = re.sub(r'torch\.tensor\(\[[^]]*\], dtype=torch\.([a-z0-9]+)\)', r'X<\1>', s)
    m = re.search(r'(torch\.[a-z_.0-9]+\(|\.([a-z_0-9]+)\(|[-+*/%&|^<>=!~]{1,2})', s2.split('r = ')[-1] if 'r = (' not in s2 else s2)
    op = re.findall(r'(?:torch\.(?:nn\.functional\.|special\.)?|\.)([a-z_0-9]+)\(', s2)
    op = [o for o in op if o not in ('tensor', 'empty', 'reshape', 'expand', 'repeat', 't', 'contiguous', 'to')]
    kt = t.split(',')[0:2]; kk = k.split(',')[0:2]
    kind = 'exc' if ("'raised'" in t) != ("'raised'" in k) else ('exccls' if "'raised'" in t else 'val')
    dts = tuple(sorted(set(re.findall(r'dtype=torch\.([a-z0-9]+)', s))))
    groups[(op[0] if op else s2[:40], kind, dts)].append((i, s, t, k))
print(f'{len(blocks)} disagreements, {nf16} where torch lacks a 16-bit kernel, {len(blocks) - nf16} in {len(groups)} groups')
for key, v in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
    print(len(v), key)
    for i, s, t, k in v[:show]:
        print('   ', i, s[:300]); print('      T', t[:300]); print('      K', k[:300])
