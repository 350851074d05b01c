"""Compare each expression of a list (one per line, in `L`) between kiln and torch; see drive.sh."""
import sys, math, warnings, traceback
warnings.simplefilter("ignore")
import numpy as np, torch, kiln
def run(lib, src):
    env={"L":lib,"torch":lib,"inf":math.inf,"nan":math.nan,"np":np}
    try:
        return eval(src, env)
    except Exception as e:
        return ("EXC", type(e).__name__, str(e)[:150])
def flat(r):
    if isinstance(r,(tuple,list)) and not (len(r)==3 and r[0]=="EXC"):
        return [x for e in r for x in flat(e)]
    return [r]
def desc(x):
    if hasattr(x,"dtype") and hasattr(x,"shape"):
        return (str(x.dtype).split(".")[-1], tuple(x.shape))
    return type(x).__name__
def same(a,b):
    if isinstance(a,tuple) and a and a[0]=="EXC" or isinstance(b,tuple) and b and b[0]=="EXC":
        return isinstance(a,tuple) and isinstance(b,tuple) and a[:2]==b[:2]
    if hasattr(a,"dtype") and hasattr(b,"dtype"):
        if desc(a)!=desc(b): return False
        x=a.detach().double().numpy() if a.dtype!=kiln.bool else a.numpy()
        y=b.detach().double().numpy() if b.dtype!=torch.bool else b.numpy()
        if a.dtype in (kiln.int64,) : x=a.numpy(); y=b.numpy()
        if x.shape!=y.shape: return False
        if x.dtype.kind=="f":
            if not np.array_equal(np.isnan(x),np.isnan(y)): return False
            m=~np.isnan(x)
            if not np.array_equal(np.signbit(x[m]),np.signbit(y[m])): return False
            return np.allclose(x[m],y[m],rtol=1e-5,atol=1e-7) and np.array_equal(np.isinf(x[m]), np.isinf(y[m]))
        return np.array_equal(x,y)
    if hasattr(a,"dtype") or hasattr(b,"dtype"): return False
    if isinstance(a,float) and isinstance(b,float):
        return (math.isnan(a) and math.isnan(b)) or a==b
    return a==b and type(a)==type(b)
def show(x):
    if hasattr(x,"dtype"):
        try: return f"{desc(x)} {x.detach().tolist()}"[:300]
        except Exception as e: return repr(e)
    return repr(x)[:300]
bad=0; n=0
start=int(sys.argv[2]) if len(sys.argv)>2 else 0
prog=open(sys.argv[1]+".prog","w")
for li,line in enumerate(open(sys.argv[1])):
    if li<start: continue
    prog.seek(0); prog.write(str(li)+"      "); prog.flush()
    src=line.strip()
    if not src or src.startswith("#"): continue
    n+=1
    k=run(kiln,src); t=run(torch,src)
    fk, ft = flat(k), flat(t)
    ok = len(fk)==len(ft) and all(same(a,b) for a,b in zip(fk,ft))
    if not ok:
        bad+=1
        print("MISMATCH:", src); print("   kiln :", " | ".join(show(x) for x in fk)); print("   torch:", " | ".join(show(x) for x in ft))
print(f"{n} cases, {bad} mismatches")
