"""Group compare.py's MISMATCH blocks by op, first-operand kind and outcome; -v N shows N of each."""
import re, sys, collections
lines=open(sys.argv[1]).read().split("\n")
groups=collections.defaultdict(list)
for i,l in enumerate(lines):
    if not l.startswith("MISMATCH:"): continue
    k=lines[i+1][10:]; t=lines[i+2][10:]
    if "has no attribute" in k or "not implemented for 'Half'" in t or "not implemented for 'BFloat16'" in t: continue
    src=l[10:]
    if src.startswith("L.tensor("):
        op="."+re.findall(r"\)\.(\w+)\(",src)[-1]
    else:
        op=re.match(r"L\.([\w.]+)\(",src).group(1)
    sf = bool(re.match(r"L\.[\w.]+\((?!L\.)",src))
    dts=tuple(re.findall(r"dtype=L\.(\w+)",src))
    kind=("kEXC:"+k.split("'")[3] if k.startswith("('EXC'") else "kval")+"/"+("tEXC:"+t.split("'")[3] if t.startswith("('EXC'") else "tval")
    groups[(op,sf,kind)].append((dts,src,k,t))
for key,v in sorted(groups.items()):
    print(len(v),key, sorted(set(d for d,_,_,_ in v))[:6])
    if "-v" in sys.argv:
        for d,s,k,t in v[:int(sys.argv[-1])]:
            print("    ",s[:250]); print("      k",k[:250]); print("      t",t[:250])
