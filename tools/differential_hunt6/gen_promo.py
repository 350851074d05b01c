dts = ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64']
def mk(dt, zero=False):
    if dt == 'bool':
        return "torch.tensor(True)" if zero else "torch.tensor([True, False, True])"
    v = "3" if zero else "[1, 2, 3]"
    if dt.startswith('float') or dt == 'bfloat16':
        v = "2.5" if zero else "[1.5, -2.0, 3.25]"
    return f"torch.tensor({v}, dtype=torch.{dt})"
scalars = ['2', '-3', '2.5', 'True', 'False', '300', '-129', '2**31', '2**63-1', '2**64', '1e40', '1e300', 'float("nan")', 'float("inf")', 'np.float32(2.5)', 'np.int64(3)', 'np.float64(1.5)', 'np.bool_(True)', 'np.int8(-2)', 'np.uint8(200)']
ops = ['+', '-', '*', '/', '//', '%', '**', '&', '|', '^', '<', '==', '>=']
out = []
for a in dts:
    for s in scalars:
        for op in ops:
            out.append(f"a = {mk(a)}; r = a {op} {s}")
            out.append(f"a = {mk(a)}; r = {s} {op} a")
    for b in dts:
        for op in ['+', '*', '/', '<', '&', '//', '**']:
            out.append(f"r = {mk(a)} {op} {mk(b, True)}")
            out.append(f"r = {mk(a, True)} {op} {mk(b)}")
            out.append(f"r = {mk(a, True)} {op} {mk(b, True)}")
        # in-place must refuse cast
        for op in ['add_', 'mul_', 'div_', 'sub_', 'floor_divide_', 'pow_', 'bitwise_and_', 'clamp_', 'copy_', 'lerp_', 'addcmul_', 'remainder_', 'atan2_', 'maximum']:
            if op == 'clamp_':
                out.append(f"a = {mk(a)}; r = a.clamp_(min={mk(b, True)})")
            elif op == 'lerp_':
                out.append(f"a = {mk(a)}; r = a.lerp_({mk(b)}, 0.5)")
            elif op == 'addcmul_':
                out.append(f"a = {mk(a)}; r = a.addcmul_({mk(b)}, {mk(b)})")
            elif op == 'maximum':
                out.append(f"a = {mk(a)}; r = torch.maximum(a, {mk(b)})")
            else:
                out.append(f"a = {mk(a)}; r = a.{op}({mk(b)})")
                out.append(f"a = {mk(a)}; r = a.{op}({mk(b, True)})")
    for s in ['2', '2.5', 'True', '1e300', '-1', '2**40']:
        for op in ['add_', 'mul_', 'div_', 'sub_', 'fill_', 'pow_', 'floor_divide_', 'remainder_', 'clamp_', 'masked_fill_']:
            if op == 'clamp_':
                out.append(f"a = {mk(a)}; r = a.clamp_({s})")
            elif op == 'masked_fill_':
                out.append(f"a = {mk(a)}; r = a.masked_fill_(torch.tensor([True, False, True]), {s})")
            else:
                out.append(f"a = {mk(a)}; r = a.{op}({s})")
        out.append(f"r = torch.full((2,), {s}, dtype=torch.{a})")
        out.append(f"r = torch.tensor({s}, dtype=torch.{a})")
        out.append(f"r = torch.tensor([{s}], dtype=torch.{a})")
        out.append(f"r = torch.result_type({mk(a)}, {s})")
        out.append(f"r = torch.where(torch.tensor([True, False, True]), {mk(a)}, {s})")
print('\n'.join(out))
