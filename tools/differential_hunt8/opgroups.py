"""Group run8.py disagreements of operator snippets (`r = a OP b`, `x OP= b`) by operator, kind and dtypes."""
import re, collections, sys
txt = open(sys.argv[1]).read()
blocks = re.findall(r'^--- \[(\d+)\] (.*)\n  torch: (.*)\n  kiln : (.*)$', txt, re.M)
g = collections.defaultdict(list)
for i, s, t, k in blocks:
    if re.search(r"not implemented for .{0,2}'?(Half|BFloat16)", t): continue
    s2 = re.sub(r'torch\.tensor\(\[[^]]*\], dtype=torch\.([a-z0-9]+)\)', r'X<\1>', s)
    m = re.match(r'r = (\S+) (\S+) (\S+)$', s2) or re.match(r'x = (\S+); x (\S+)= (\S+); r = x$', s2)
    if not m: continue
    a, op, b = m.groups()
    da = ','.join(re.findall(r'<(\w+)>', a)) or 'num'; db = ','.join(re.findall(r'<(\w+)>', b)) or 'num'
    kind = 'exc' if ("'raised'" in t) != ("'raised'" in k) else ('exccls' if "'raised'" in t else 'val')
    key = (op + ('=' if s2.startswith('x') else ''), kind, da, db)
    g[key].append((i, s2[:150], t[:200], k[:200]))
for k, v in sorted(g.items()):
    print(len(v), k, v[0][0], v[0][1][:100])
