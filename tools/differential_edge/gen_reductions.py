import sys
import random
R = random.Random(1)
FV = ["nan", "inf", "-inf", "-0.0", "0.0", "1.5", "-2.5", "3.0", "1e38", "-1e38", "2.5", "0.5", "-0.5", "1e-40"]
IV = {"int64": ["0", "1", "-1", "9223372036854775807", "-9223372036854775808", "5", "-3"], "int32": ["0", "1", "-1", "2147483647", "-2147483648", "5"], "int8": ["0", "1", "-1", "127", "-128", "5"], "uint8": ["0", "1", "255", "128", "5"], "bool": ["True", "False"]}
FL = ["float32", "float64", "float16", "bfloat16"]
ALL = FL + list(IV)
def vals(dt, n):
    pool = FV if dt in FL else IV[dt]
    return [R.choice(pool) for _ in range(n)]
def ten(dt, shape, layout=""):
    n = 1
    for s in shape: n *= s
    v = vals(dt, n)
    if shape == ():
        s = f"L.tensor({v[0]}, dtype=L.{dt})"
    else:
        s = f"L.tensor([{', '.join(v)}], dtype=L.{dt}).reshape{shape}"
    if layout == "t" and len(shape) >= 2: s += ".transpose(0, 1)"
    if layout == "e": s = f"L.tensor([{', '.join(v[:shape[-1]] if shape else v)}], dtype=L.{dt}).expand{(3,) + tuple(shape[-1:])}" if shape else s
    return s
def rt(dt):
    shape = R.choice([(), (0,), (5,), (3, 4), (2, 0, 3), (4, 1), (2, 3, 2)])
    return ten(dt, shape, R.choice(["", "", "t", "e"])), shape
out = []
red = ["sum", "prod", "mean", "nansum", "nanmean", "max", "min", "amax", "amin", "argmax", "argmin", "median", "nanmedian", "std", "var", "logsumexp", "cumsum", "cumprod", "cummax", "cummin", "all", "any", "count_nonzero", "norm", "aminmax", "sort", "argsort", "msort", "kthvalue", "mode", "std_mean", "var_mean", "unique", "unique_consecutive", "topk", "softmax", "log_softmax", "nn.functional.softmax", "nn.functional.log_softmax", "nn.functional.normalize", "diff", "cumulative_trapezoid", "trapz", "logcumsumexp", "flip", "nanquantile", "quantile", "sign", "round"]
for _ in range(2500):
    op = R.choice(red); dt = R.choice(ALL); t, shape = rt(dt)
    nd = len(shape)
    kw = []
    d = R.choice([None, 0, -1, 1, (0, -1)]) if nd else R.choice([None, 0, -1])
    if op in ("cumsum", "cumprod", "cummax", "cummin", "softmax", "log_softmax", "nn.functional.softmax", "nn.functional.log_softmax", "logcumsumexp", "kthvalue", "topk", "argsort", "sort", "mode", "diff", "cumulative_trapezoid") and (d is None or isinstance(d, tuple)):
        d = R.choice([0, -1])
    args = [t]
    if op in ("kthvalue",): args.append(str(R.choice([1, 2, 3])))
    if op in ("topk",): args.append(str(R.choice([0, 1, 2, 3])))
    if op in ("quantile", "nanquantile"): args.append(R.choice(["0.5", "0.0", "1.0", "L.tensor([0.25, 0.75], dtype=L.float64)"]))
    if op == "flip": d = R.choice([(0,), (-1,), ()]) if nd else ()
    if d is not None: kw.append(f"dim={d}")
    if op in ("sum", "prod", "mean", "nansum", "nanmean", "max", "min", "amax", "amin", "argmax", "argmin", "median", "nanmedian", "std", "var", "logsumexp", "norm", "kthvalue", "mode", "std_mean", "var_mean", "any", "all", "quantile", "nanquantile") and d is not None and R.random() < 0.5:
        kw.append("keepdim=True")
    if op in ("sum", "prod", "cumsum", "cumprod", "softmax", "log_softmax", "mean", "nansum") and R.random() < 0.3:
        kw.append("dtype=L." + R.choice(ALL))
    if op in ("std", "var", "std_mean", "var_mean") and R.random() < 0.5:
        kw.append(R.choice(["unbiased=False", "correction=0", "correction=2"]))
    if op in ("sort", "argsort", "topk") and R.random() < 0.5: kw.append(R.choice(["descending=True", "stable=True"]) if op != "topk" else "largest=False")
    if op in ("unique",): kw += R.sample(["sorted=True", "return_inverse=True", "return_counts=True"], 2)
    if op == "norm" and R.random() < 0.5: kw.append("p=" + R.choice(["1", "2", "inf", "-inf", "0", "3", "0.5"]))
    if op == "round" and R.random() < 0.5: kw.append("decimals=" + R.choice(["0", "1", "-1", "2"])); kw = [k for k in kw if not k.startswith("dim")]
    if op == "sign": kw = []
    if op in ("unique",) and R.random() < 0.6: kw = [k for k in kw if not k.startswith("dim")]
    out.append(f"L.{op}({', '.join(args + kw)})")
# clamp / where / masked_fill / comparisons / misc
for _ in range(1500):
    dt = R.choice(ALL); t, shape = rt(dt)
    c = R.randrange(12)
    sc = lambda: R.choice(["nan", "inf", "-inf", "0", "-1", "2.5", "True", "-0.0", "300", "9223372036854775807", "None", "1e39"])
    if c == 0: out.append(f"L.clamp({t}, min={sc()}, max={sc()})")
    elif c == 1: out.append(f"L.clamp({t}, min={sc()})")
    elif c == 2: out.append(f"L.where({t} > 0, {t}, {sc()})")
    elif c == 3: out.append(f"L.where({t} > 0, {sc()}, {sc()})")
    elif c == 4: out.append(f"{t}.masked_fill({t} != 0, {sc()})")
    elif c == 5: out.append(f"L.isclose({t}, {t}.flip(0) if {t}.dim() else {t}, equal_nan={R.choice(['True','False'])})")
    elif c == 6: out.append(f"L.equal({t}, {t})")
    elif c == 7: out.append(f"L.allclose({t}, {ten(dt, shape)}, equal_nan={R.choice(['True','False'])})")
    elif c == 8: out.append(f"L.clamp({t}, min={ten(R.choice(ALL), shape[-1:])}, max={ten(R.choice(ALL), shape[-1:])})")
    elif c == 9: out.append(f"L.nan_to_num({t}, nan={sc()}, posinf={sc()})")
    elif c == 10: out.append(f"L.where({t} > 0, {t}, {ten(R.choice(ALL), shape)})")
    elif c == 11: out.append(f"{t}.masked_fill_({t} == 0, {sc()})")
# creation
for _ in range(400):
    c = R.randrange(6)
    num = lambda: R.choice(["0", "1", "-1", "2.5", "-0.5", "10", "nan", "inf", "1e-300", "0.1", "3", "-7", "9223372036854775807"])
    dt = R.choice(["", ", dtype=L.int64", ", dtype=L.float32", ", dtype=L.float64", ", dtype=L.int32", ", dtype=L.uint8", ", dtype=L.float16", ", dtype=L.bfloat16", ", dtype=L.bool"])
    if c == 0: out.append(f"L.arange({num()}, {num()}, {num()}{dt})")
    elif c == 1: out.append(f"L.arange({num()}{dt})")
    elif c == 2: out.append(f"L.linspace({num()}, {num()}, {R.choice([0, 1, 2, 5, 7])}{dt})")
    elif c == 3: out.append(f"L.logspace({num()}, {num()}, {R.choice([0, 1, 2, 5])}, base={R.choice(['2', '10', '-2', '0.5'])}{dt})")
    elif c == 4: out.append(f"L.full((2, 2), {num()}{dt})")
    elif c == 5: out.append(f"L.tensor({num()}{dt})")
# losses
for _ in range(500):
    c = R.randrange(5)
    n, C = R.choice([(3, 4), (1, 2), (0, 3), (4, 1)])
    dt = R.choice(["float32", "float64"])
    x = f"L.tensor([{', '.join(R.choice(FV[:6] + ['1.0', '-2.0', '0.3', '5.0']) for _ in range(n * C))}], dtype=L.{dt}).reshape({n}, {C})"
    tg = f"L.tensor([{', '.join(str(R.choice(list(range(C)) + [-100, -1])) for _ in range(n))}], dtype=L.int64)"
    red_ = R.choice(["'mean'", "'sum'", "'none'"])
    ii = R.choice(["-100", "0", "1", "-1"])
    if c == 0: out.append(f"L.nn.functional.cross_entropy({x}, {tg}, ignore_index={ii}, reduction={red_})")
    elif c == 1: out.append(f"L.nn.functional.nll_loss({x}, {tg}, ignore_index={ii}, reduction={red_})")
    elif c == 2: out.append(f"L.nn.functional.cross_entropy({x}, {tg}, ignore_index={ii}, reduction={red_}, label_smoothing={R.choice(['0.1', '0.5', '1.0'])})")
    elif c == 3: out.append(f"L.nn.functional.cross_entropy({x}, {tg}, weight=L.tensor([{', '.join(R.choice(['1.0', '0.0', '2.0', 'inf']) for _ in range(C))}], dtype=L.{dt}), ignore_index={ii}, reduction={red_})")
    elif c == 4: out.append(f"L.nn.functional.{R.choice(['mse_loss', 'l1_loss', 'smooth_l1_loss', 'huber_loss', 'binary_cross_entropy_with_logits', 'kl_div', 'soft_margin_loss'])}({x}, {x.replace('reshape', 'flip(0).reshape')}, reduction={red_})")
open(sys.argv[1] if len(sys.argv) > 1 else "p_reductions.txt", "w").write("\n".join(out) + "\n")
print(len(out))
