import sys, re
txt = open(sys.argv[1]).read()
blocks = re.findall(r'^--- (.*)\n  torch: (.*)\n  kiln : (.*)$', txt, re.M)
excl = sys.argv[2:] 
n = 0
for s, t, k in blocks:
    if any(e in t or e in k or e in s for e in excl):
        continue
    n += 1
    print('---', s[:260]); print('  T', t[:260]); print('  K', k[:260])
print(n, 'shown of', len(blocks), file=sys.stderr)
