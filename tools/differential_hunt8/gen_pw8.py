# Pointwise ops on edge values (section 0h of docs/DIFFERENTIAL_FINDINGS.md): every `pointwise:` entry of
# schema/native_functions.yaml (and the torch names that reach it: function, method, in-place, out=,
# operators, nn.functional activations) on edge inputs in every real dtype, with Python scalars and 0-dim
# tensors of other dtypes, out= of other dtypes, in-place casts, 0-dim/empty/broadcast/non-contiguous inputs.
# Prints one snippet a line (`torch` is the library under test). Usage: gen_pw8.py [group ...]
import sys, itertools, os
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, '..', '..', 'schema', 'native_functions.yaml')

FV = ['nan', 'inf', '-inf', '-0.0', '0.0', '1e-45', '1e-40', '5e-324', '3.4028234663852886e38', '-3.4028234663852886e38',
      '1.1754943508222875e-38', '1.7976931348623157e308', '88.7', '89.0', '-103.9', '710.0', '-745.2', '0.5', '-0.5',
      '1.0', '-1.0', '2.5', '-2.5', '3.0', '-3.0', '65504.0', '65520.0', '1e-8', '20.0', '-20.0', '0.75', '6.0']
FV2 = ['nan', 'inf', '-inf', '-0.0', '0.0', '1e-40', '3.4e38', '-1e308', '89.0', '-103.9', '0.5', '-1.0', '2.5', '-3.0', '65520.0']
IV = {
    'int64': ['0', '1', '-1', '7', '-7', '9223372036854775807', '-9223372036854775808', '2147483647', '-2147483648', '63', '64', '-3'],
    'int32': ['0', '1', '-1', '7', '-7', '2147483647', '-2147483648', '31', '32', '-3', '100'],
    'int16': ['0', '1', '-1', '7', '-7', '32767', '-32768', '15', '16', '-3'],
    'int8': ['0', '1', '-1', '7', '-7', '127', '-128', '8', '3', '-3'],
    'uint8': ['0', '1', '255', '7', '128', '8', '3', '200'],
    'bool': ['True', 'False'],
}
FL = ['float32', 'float64', 'float16', 'bfloat16']
INTS = ['int64', 'int32', 'int16', 'int8', 'uint8']
ALL = FL + INTS + ['bool']
SCAL = ['0', '-1', '2', '0.0', '-0.0', '1.5', 'nan', 'inf', '-inf', 'True', '9223372036854775807',
        '-9223372036854775808', '300', '1e308', '1e-45', '64', '-3', '89.0']


def vals(dt, small=False):
    return (FV2 if small else FV) if dt in FL else IV[dt]


def T(dt, vs):
    return f"torch.tensor([{', '.join(vs)}], dtype=torch.{dt})"


def full(dt):
    return T(dt, vals(dt))


def pair(dt, dt2=None):
    xs, ys = zip(*itertools.product(vals(dt, True), vals(dt2 or dt, True)))
    return T(dt, list(xs)), T(dt2 or dt, list(ys))


def schema_pointwise():
    names = []
    for e in yaml.safe_load(open(SCHEMA)):
        if 'pointwise' in e:
            names.append(e['func'].split('(')[0].split('.')[0])
    return sorted(set(names))


# torch spelling of each unary op (schema name -> callable text taking x)
UNARY = ['neg', 'exp', 'tanh', 'sigmoid', 'abs', 'log', 'sqrt', 'relu', 'rsqrt', 'log1p', 'expm1', 'sin', 'cos', 'erf',
         'isnan', 'isinf', 'isfinite', 'sign', 'reciprocal', 'log2', 'log10', 'exp2', 'asin', 'acos', 'atan', 'sinh',
         'cosh', 'tan', 'asinh', 'acosh', 'atanh', 'erfc', 'erfinv', 'lgamma', 'digamma', 'deg2rad', 'rad2deg', 'sgn',
         'bitwise_not', 'floor', 'ceil', 'trunc', 'round', 'logical_not', 'frac', 'logit', 'nan_to_num', 'square',
         'positive', 'fix', 'signbit', 'sinc', 'isposinf', 'isneginf', 'isreal', 'negative', 'absolute', 'i0',
         'special.expit', 'special.ndtr', 'special.log_ndtr', 'special.erfcx', 'special.entr']
FUNC = ['silu', 'mish', 'hardswish', 'hardsigmoid', 'logsigmoid', 'gelu', 'elu', 'selu', 'celu', 'softplus', 'leaky_relu',
        'hardtanh', 'relu6', 'softshrink', 'hardshrink', 'tanhshrink', 'softsign', 'relu', 'sigmoid', 'tanh']
FUNC_ARGS = {'gelu': ["approximate='tanh'"], 'elu': ['alpha=0.5', 'alpha=-1.0'], 'celu': ['alpha=2.0'],
             'softplus': ['beta=2.0', 'beta=0.5, threshold=1.0', 'beta=-1.0'], 'leaky_relu': ['0.2', '-0.5', 'nan'],
             'hardtanh': ['-2.0, 3.0', '0.0, 0.0', 'nan, 1.0'], 'softshrink': ['0.0', '1.0', 'inf'], 'hardshrink': ['0.0', '1.0', 'inf']}
INPLACE_F = {'silu', 'mish', 'hardswish', 'hardsigmoid', 'elu', 'selu', 'celu', 'leaky_relu', 'hardtanh', 'relu6', 'relu'}
BINARY = ['add', 'sub', 'mul', 'div', 'floor_divide', 'remainder', 'fmod', 'atan2', 'pow', 'maximum', 'minimum', 'fmax',
          'fmin', 'hypot', 'copysign', 'logical_and', 'logical_or', 'logical_xor', 'bitwise_and', 'bitwise_or',
          'bitwise_xor', 'bitwise_left_shift', 'bitwise_right_shift', 'logaddexp', 'logaddexp2', 'gcd', 'lcm',
          'nextafter', 'float_power', 'heaviside', 'xlogy', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'clamp_min', 'clamp_max',
          'true_divide', 'rsub', 'special.xlog1py', 'ldexp', 'isclose', 'special.zeta']
NO_METHOD = {'special.xlog1py', 'special.zeta', 'rsub_', 'isclose_'}
NO_INPLACE = {'maximum', 'minimum', 'fmax', 'fmin', 'logaddexp', 'logaddexp2', 'eq_x', 'isclose', 'special.xlog1py',
              'special.zeta', 'rsub'}
OPS = [('+', 'add'), ('-', 'sub'), ('*', 'mul'), ('/', 'div'), ('//', 'fd'), ('%', 'rem'), ('**', 'pow'), ('&', 'and'),
       ('|', 'or'), ('^', 'xor'), ('<<', 'lsh'), ('>>', 'rsh'), ('<', 'lt'), ('<=', 'le'), ('==', 'eq'), ('!=', 'ne'),
       ('>', 'gt'), ('>=', 'ge')]


def fn(op):
    return f"torch.{op}" if '.' in op or op not in FUNC else f"torch.nn.functional.{op}"


def unary(out):
    for op in UNARY:
        for dt in ALL:
            x = full(dt)
            out.append(f"r = torch.{op}({x})")
            if '.' in op:
                continue
            out.append(f"r = {x}.{op}()")
            out.append(f"x = {x}; y = x.{op}_(); r = (x, y is x)")
            for odt in ['float32', 'float64', 'float16', 'int64', 'int32', 'bool', dt]:
                out.append(f"o = torch.empty(0, dtype=torch.{odt}); y = torch.{op}({x}, out=o); r = (o, y is o)")
            # layouts: transposed, stepped, expanded, 0-dim, empty, blocks of 19 (vector body + tail)
            out.append(f"x = {x}.reshape(-1, 1).expand(-1, 3).t(); r = torch.{op}(x)")
            out.append(f"x = {x}.repeat(3)[::3]; r = torch.{op}(x)")
            out.append(f"x = {x}.reshape(-1, 1).expand(-1, 19); r = torch.{op}(x)")
            out.append(f"x = {x}.reshape(-1, 1).expand(-1, 19).contiguous(); r = torch.{op}(x)")
            out.append(f"r = torch.{op}(torch.empty(0, 3, dtype=torch.{dt}))")
            for v in vals(dt)[:6]:
                out.append(f"r = torch.{op}(torch.tensor({v}, dtype=torch.{dt}))")
    for dt in ALL:
        x = full(dt)
        for a in ['decimals=1', 'decimals=-1', 'decimals=3', 'decimals=0']:
            out.append(f"r = torch.round({x}, {a})")
        for a in ['nan=1.0, posinf=2.0, neginf=-3.0', 'nan=1e300', 'posinf=1e300', 'neginf=-1e39', 'nan=True']:
            out.append(f"r = torch.nan_to_num({x}, {a})")
            out.append(f"x = {x}; x.nan_to_num_({a}); r = x")
        for a in ['0.1', '0.5', '0.0', '-0.1', '1e-45', 'nan']:
            out.append(f"r = torch.logit({x}, {a})")
        for mn, mx in [('0', '1'), ('-1.5', 'None'), ('None', '2.5'), ('nan', '1'), ('1', 'nan'), ('2', '1'), ('-inf', 'inf'),
                       ('-0.0', '0.0'), ('0.0', '-0.0'), ('300', 'None'), ('True', 'None'), ('-1e39', '1e39')]:
            out.append(f"r = torch.clamp({x}, {mn}, {mx})")
            out.append(f"x = {x}; x.clamp_({mn}, {mx}); r = x")
            out.append(f"o = torch.empty(0, dtype=torch.float64); torch.clamp({x}, {mn}, {mx}, out=o); r = o")
        for a in ['0.5, 2.0', '0.0, -0.0', 'nan, 1.0', '1.0, nan', '-inf, 0.0', '1e39, 1.0', '2, 300']:
            out.append(f"r = torch.threshold({x}, {a})")
            out.append(f"r = torch.nn.functional.threshold({x}, {a}, inplace=True)")
    for op in FUNC:
        for dt in ALL:
            x = full(dt)
            out.append(f"r = torch.nn.functional.{op}({x})")
            for a in FUNC_ARGS.get(op, []):
                out.append(f"r = torch.nn.functional.{op}({x}, {a})")
            if op in INPLACE_F:
                out.append(f"x = {x}; y = torch.nn.functional.{op}(x, inplace=True); r = (x, y is x)")
                out.append(f"x = {x}; y = torch.nn.functional.{op}_(x) if hasattr(torch.nn.functional, '{op}_') else None; r = x")
            out.append(f"x = {x}.reshape(-1, 1).expand(-1, 19).contiguous(); r = torch.nn.functional.{op}(x)")
            out.append(f"r = torch.nn.functional.{op}(torch.tensor(-0.0, dtype=torch.{dt}) if torch.{dt}.is_floating_point else torch.tensor(0, dtype=torch.{dt}))")


def binary(out):
    pairs2 = [('int64', 'float32'), ('int32', 'int64'), ('uint8', 'int8'), ('bool', 'int64'), ('float16', 'bfloat16'),
              ('float32', 'float64'), ('bool', 'float16'), ('int8', 'float16'), ('int16', 'uint8'), ('bfloat16', 'int32'),
              ('float64', 'float16'), ('uint8', 'bool')]
    for op in BINARY:
        f = f"torch.{op}"
        for dt in ALL:
            a, b = pair(dt)
            out.append(f"r = {f}({a}, {b})")
            if op not in NO_METHOD:
                out.append(f"r = {a}.{op}({b})")
            if op not in NO_INPLACE:
                out.append(f"x = {a}; y = x.{op}_({b}); r = (x, y is x)")
            if op != 'isclose':
                for odt in ['float32', 'float64', 'float16', 'int64', 'int8', 'bool']:
                    out.append(f"o = torch.empty(0, dtype=torch.{odt}); y = {f}({a}, {b}, out=o); r = (o, y is o)")
            # broadcast and non-contiguous operands
            out.append(f"a, b = {a}, {b}; r = {f}(a.reshape(-1, 1)[::7], b.reshape(1, -1)[:, ::9])")
            out.append(f"a, b = {a}, {b}; r = {f}(a.reshape(-1, 1).expand(-1, 17).t(), b.reshape(-1, 1).expand(-1, 17).t().contiguous())")
            out.append(f"a, b = {a}, {b}; r = {f}(a[:0], b[:0])")
            out.append(f"a, b = {a}, {b}; r = {f}(a[:0].reshape(0, 1), b[:3])")
        for dt, dt2 in pairs2:
            a, b = pair(dt, dt2)
            out.append(f"r = {f}({a}, {b})")
            out.append(f"r = {f}({b}, {a})")
            if op not in NO_INPLACE:
                out.append(f"x = {a}; x.{op}_({b}); r = x")
        for dt in ALL:
            x = full(dt)
            for s in SCAL:
                out.append(f"r = {f}({x}, {s})")
                if op not in NO_INPLACE:
                    out.append(f"x = {x}; x.{op}_({s}); r = x")
            for s in ['0', '-1', '2', '0.0', '-0.0', '1.5', 'nan', 'inf', 'True', '-2.5', '64', '300']:
                out.append(f"r = {f}({s}, {x})")
            for zdt in ALL:
                for v in (['-0.0', 'nan'] if zdt in FL else vals(zdt)[5:7] or vals(zdt)[:2]):
                    out.append(f"r = {f}({x}, torch.tensor({v}, dtype=torch.{zdt}))")
                    out.append(f"r = {f}(torch.tensor({v}, dtype=torch.{zdt}), {x})")
    # division rounding modes
    for dt in ALL:
        a, b = pair(dt)
        for m in ["'trunc'", "'floor'", 'None']:
            out.append(f"r = torch.div({a}, {b}, rounding_mode={m})")
            out.append(f"x = {a}; x.div_({b}, rounding_mode={m}); r = x")
            out.append(f"o = torch.empty(0, dtype=torch.float64); torch.div({a}, {b}, rounding_mode={m}, out=o); r = o")
            for s in ['0', '-1', '2', '0.0', '-0.0', '1.5', 'nan', 'inf', '-9223372036854775808']:
                out.append(f"r = torch.div({a}, {s}, rounding_mode={m})")
        for alpha in ['2', '-1', '0.5', 'True', '0', 'nan', '1e39']:
            out.append(f"r = torch.add({a}, {b}, alpha={alpha})")
            out.append(f"r = torch.sub({a}, {b}, alpha={alpha})")
            out.append(f"r = torch.add({a}, 2, alpha={alpha})")
    # operators
    for dt in ALL:
        x = full(dt)
        for sym, _ in OPS:
            for s in ['0', '-1', '2', '0.0', '-0.0', '1.5', 'nan', '-inf', 'True', '-3', '64', '-2.5', '9223372036854775807', '300']:
                out.append(f"r = {x} {sym} {s}")
                out.append(f"r = {s} {sym} {x}")
                if sym not in ('<', '<=', '==', '!=', '>', '>='):
                    out.append(f"x = {x}; x {sym}= {s}; r = x")
            for dt2 in ALL:
                a, b = pair(dt, dt2)
                out.append(f"r = {a} {sym} {b}")
                if sym not in ('<', '<=', '==', '!=', '>', '>='):
                    out.append(f"x = {a}; x {sym}= {b}; r = x")
        for u in ['-', '~', '+', 'abs']:
            out.append(f"r = {u}({x})")


def ternary(out):
    for dt in ALL:
        a, b = pair(dt)
        c = T(dt, [v for v in vals(dt, True)] * len(vals(dt, True)))
        for op in ['addcmul', 'addcdiv']:
            out.append(f"r = torch.{op}({a}, {b}, {c})")
            for v in ['2', '0.5', '-1', 'nan', 'True', '0', '1e39']:
                out.append(f"r = torch.{op}({a}, {b}, {c}, value={v})")
            out.append(f"x = {a}; x.{op}_({b}, {c}); r = x")
            out.append(f"o = torch.empty(0, dtype=torch.float64); torch.{op}({a}, {b}, {c}, out=o); r = o")
        for w in ['0.5', '0.0', '1.0', '-0.5', '2.0', 'nan', 'inf', '0.25', '0.75']:
            out.append(f"r = torch.lerp({a}, {b}, {w})")
            out.append(f"x = {a}; x.lerp_({b}, {w}); r = x")
        out.append(f"r = torch.lerp({a}, {b}, {c})")
        out.append(f"r = torch.where({a} > {b}, {a}, {b})")
        out.append(f"r = torch.where({a} != {a}, {a}, 0.0)")
        out.append(f"r = torch.where({a} != {a}, 1.5, {a})")
        out.append(f"r = torch.clamp({a}, {b}, {c})")
        out.append(f"r = torch.clamp({a}, min={b})")
        out.append(f"r = torch.clamp({a}, max={b})")
        out.append(f"x = {a}; x.clamp_({b}, {c}); r = x")
        for dt2 in ['float32', 'int64', 'bool', 'float16']:
            if dt2 != dt:
                out.append(f"r = torch.where({a} > {b}, {a}, torch.tensor(1, dtype=torch.{dt2}))")
                out.append(f"r = torch.clamp({a}, torch.tensor(0, dtype=torch.{dt2}), {c})")
                out.append(f"r = torch.addcmul({a}, {b}, {c}.to(torch.{dt2}))")
                out.append(f"r = torch.lerp({a}, {b}.to(torch.{dt2}), 0.5)")


GROUPS = {'unary': unary, 'binary': binary, 'ternary': ternary}

if __name__ == '__main__':
    groups = sys.argv[1:] or list(GROUPS)
    out = []
    if groups == ['schema']:
        print('\n'.join(schema_pointwise()))
        sys.exit(0)
    for g in groups:
        GROUPS[g](out)
    print('\n'.join(out))
