import sys
import itertools, random
F = ["nan", "inf", "-inf", "-0.0", "0.0", "5e-324", "1e-40", "3.4e38", "1e308", "-1e308", "-1.5", "-0.5", "0.5", "1.5", "2.5", "-2.5", "1.0", "-1.0", "3.0", "-7.0", "65504.0", "1e-5"]
I64 = ["0", "1", "-1", "7", "-7", "9223372036854775807", "-9223372036854775808", "2147483647", "-2147483648", "3", "-3"]
I32 = ["0", "1", "-1", "7", "-7", "2147483647", "-2147483648", "3", "-3", "100"]
I8 = ["0", "1", "-1", "7", "-7", "127", "-128", "3", "-3"]
U8 = ["0", "1", "255", "7", "128", "3", "200"]
B = ["True", "False"]
DT = {"float32": F, "float64": F, "float16": F, "bfloat16": F, "int64": I64, "int32": I32, "int8": I8, "uint8": U8, "bool": B, "int16": ["0","1","-1","32767","-32768","7","-7"]}
def t(dt, vals, shape=None):
    s = f"L.tensor([{', '.join(vals)}], dtype=L.{dt})"
    return s
def full(dt):
    return t(dt, DT[dt])
def pair(dt, other_dt=None):
    """two same-length tensors: all combos of edge values."""
    a = DT[dt]; b = DT[other_dt or dt]
    xs, ys = zip(*itertools.product(a, b))
    return t(dt, list(xs)), t(other_dt or dt, list(ys))
out = []
FL = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int8", "uint8", "int16"]
ALL = FL + INTS + ["bool"]
bin_ops = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "atan2", "maximum", "minimum", "fmax", "fmin", "copysign", "hypot", "eq", "lt", "ge", "ne", "isclose", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "logical_and", "logical_xor", "xlogy", "nextafter", "true_divide", "ldexp", "float_power", "gcd", "lcm", "logaddexp", "logaddexp2", "heaviside"]
for op in bin_ops:
    for dt in ALL:
        a, b = pair(dt)
        out.append(f"L.{op}({a}, {b})")
    for dt, dt2 in [("int64", "float32"), ("int32", "int64"), ("uint8", "int8"), ("bool", "int64"), ("float16", "bfloat16"), ("float32", "float64"), ("bool", "float16"), ("int8", "float16")]:
        a, b = pair(dt, dt2)
        out.append(f"L.{op}({a}, {b})")
    for dt in ALL:
        for s in ["0", "-1", "2", "-2", "0.0", "-0.0", "1.5", "nan", "inf", "-inf", "True", "False", "9223372036854775807", "-9223372036854775808", "300", "-0.5", "2.5", "1e308", "63", "64", "65"]:
            out.append(f"L.{op}({full(dt)}, {s})")
    for dt in ALL:
        for s in ["0", "-1", "2", "0.0", "-0.0", "1.5", "nan", "inf", "True", "-2.5"]:
            out.append(f"L.{op}({s}, {full(dt)})")
for dt in ALL:
    for op in ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__rsub__", "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__", "__lshift__", "__rshift__", "__and__", "__or__", "__xor__", "__rlshift__", "__rrshift__"]:
        for s in ["0", "-1", "2", "0.0", "-0.0", "1.5", "nan", "-inf", "True", "-3", "64", "-2.5"]:
            out.append(f"{full(dt)}.{op}({s})")
    for op in ["__neg__", "__abs__", "__invert__", "__pos__"]:
        out.append(f"{full(dt)}.{op}()")
un_ops = ["neg", "abs", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sigmoid", "tanh", "relu", "erf", "erfc", "erfinv", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "nan_to_num", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit", "bitwise_not", "logical_not", "square", "positive", "deg2rad", "rad2deg", "logit", "lgamma", "digamma", "i0", "sinc", "angle", "fix", "special.expit", "special.erfcx", "special.ndtr", "special.ndtri", "special.log_ndtr", "special.xlog1py", "special.entr", "special.sinc", "special.i0e", "special.i1", "special.i1e", "nn.functional.relu6", "nn.functional.silu", "nn.functional.gelu", "nn.functional.elu", "nn.functional.selu", "nn.functional.softplus", "nn.functional.mish", "nn.functional.hardswish", "nn.functional.hardsigmoid", "nn.functional.logsigmoid", "nn.functional.leaky_relu", "nn.functional.softsign", "nn.functional.tanhshrink", "nn.functional.hardshrink", "nn.functional.softshrink", "nn.functional.celu", "nn.functional.hardtanh"]
for op in un_ops:
    for dt in ALL:
        out.append(f"L.{op}({full(dt)})")
        if op == "special.xlog1py": out[-1] = f"L.{op}({full(dt)}, {full(dt)})"
for dt in ALL:
    out.append(f"L.round({full(dt)}, decimals=1)")
    out.append(f"L.round({full(dt)}, decimals=-1)")
    out.append(f"L.round({full(dt)}, decimals=3)")
    out.append(f"L.nan_to_num({full(dt)}, nan=1.0, posinf=2.0, neginf=-3.0)")
    for dt2 in ALL:
        if dt in FL and dt2 in INTS: continue  # UB
        out.append(f"{full(dt)}.to(L.{dt2})")
random.Random(0).shuffle(out)
open(sys.argv[1] if len(sys.argv) > 1 else "p_pointwise.txt", "w").write("\n".join(out) + "\n")
print(len(out))
