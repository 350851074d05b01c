out = []
datas = ["[1, 2.5]", "[True, 2]", "[True, 2.5]", "[[1, 2], [3]]", "[[1, 2], 3]", "[1, [2]]", "[]", "[[]]", "[[], []]", "[[[]]]", "2**63", "-2**63", "2**64", "[2**63]", "[1, 2**63]", "[-2**63 - 1]", "1e400", "[1e39]", "float('nan')", "[np.float32(1.5), 2]", "[np.int64(3), 2.5]", "np.float16(1.5)", "np.int8(-3)", "np.bool_(True)", "[np.bool_(True), False]", "[torch.tensor(1), 2]", "[torch.tensor([1, 2]), torch.tensor([3, 4])]", "[torch.tensor(1.5), torch.tensor(2)]", "(1, 2)", "((1, 2), [3, 4])", "range(3)", "[range(2), range(2)]", "'abc'", "['a']", "None", "[None]", "[1, None]", "b'ab'", "bytearray(b'ab')", "{1: 2}", "{1, 2}", "np.array([1, 2], dtype=np.uint16)", "np.array([1, 2], dtype=np.uint32)", "np.array([1, 2], dtype=np.uint64)", "np.array(['a'])", "np.array([1+2j])", "np.array([1.5], dtype=np.float128) if hasattr(np, 'float128') else np.array([1.5], dtype=np.longdouble)", "np.array([[1, 2], [3, 4]])[:, 0]", "np.zeros((2, 0))", "[[1, 2], [3, 4.5]]", "[[True], [2]]", "[1, 'a']", "3 + 4j", "[3 + 4j]", "True", "2.5", "-0.0", "[-0.0]", "[float('inf'), -float('inf')]", "[2**62, 2.5]", "[[1], [2, 3]]", "np.array([[1, 2], [3]], dtype=object)", "np.array([1, 2], dtype=object)", "[np.array([1, 2]), np.array([3, 4])]", "[np.array(1), 2]", "[[np.float64(1)], [2]]"]
dts = ["None", "torch.float32", "torch.int64", "torch.bool", "torch.uint8", "torch.int8", "torch.float16", "torch.bfloat16", "torch.int32", "torch.float64"]
for d in datas:
    for dt in dts:
        out.append(f"r = torch.tensor({d}, dtype={dt})")
    out.append(f"r = torch.as_tensor({d})")
    out.append(f"r = torch.Tensor({d})")
    out.append(f"r = torch.FloatTensor({d})")
    out.append(f"r = torch.LongTensor({d})")
    out.append(f"r = torch.asarray({d})")
    out.append(f"r = torch.tensor({d}, requires_grad=True)")
    out.append(f"r = torch.zeros(2).new_tensor({d})")
    out.append(f"r = torch.full((2,), {d})")
    out.append(f"r = torch.tensor([1, 2]).fill_({d})" )
# repr/str
vals = ["torch.tensor(2.5)", "torch.tensor([])", "torch.empty(0, 3)", "torch.empty(2, 0)", "torch.tensor([1e-10, 1.])", "torch.tensor([1e10, 1.])", "torch.tensor([1e20, 1e-20])",
        "torch.tensor([float('nan'), float('inf'), -float('inf'), 1.5])", "torch.tensor([1., 2., 3.])", "torch.tensor([1, -2, 300])", "torch.tensor([True, False])", "torch.tensor(True)",
        "torch.tensor(7)", "torch.tensor([0.1, 0.25], dtype=torch.float64)", "torch.tensor([1.5], dtype=torch.float16)", "torch.tensor([1.5, 1e4], dtype=torch.bfloat16)", "torch.arange(2000.)",
        "torch.arange(10000).reshape(100, 100)", "torch.tensor([-0.0, 0.0])", "torch.tensor(1e-5)", "torch.tensor(123456789.)", "torch.tensor([123456789., 1.])", "torch.tensor([1.123456789])",
        "torch.tensor([1, 2], dtype=torch.uint8)", "torch.tensor([1.5], requires_grad=True)", "torch.tensor([1.5], requires_grad=True) * 2", "torch.tensor([[1.5, 2], [3, 4]]).t()",
        "torch.tensor([1e-5, 1e5])", "torch.tensor([0.0001, 1000.])", "torch.tensor([1e-4, 1e4])", "torch.tensor([1., 1e8])", "torch.tensor([2**40, 1], dtype=torch.int64)", "torch.zeros(2, 3, dtype=torch.int8)",
        "torch.tensor([float('nan')])", "torch.tensor(float('inf'))", "torch.tensor([1e-300], dtype=torch.float64)", "torch.tensor([5e-324, 1.], dtype=torch.float64)", "torch.tensor([65504.], dtype=torch.float16)",
        "torch.ones(3, 1, 2)", "torch.tensor([[[1.]]])", "torch.tensor([1.5]).double()", "torch.tensor([100., 200.])", "torch.tensor([0.5, 100000.])", "torch.tensor([1, 2, 3.5]).half()"]
for v in vals:
    out.append(f"r = repr({v})")
    out.append(f"r = str({v})")
    out.append(f"r = repr({v}.tolist())")
    out.append(f"r = format({v}.sum(), '.3f') if {v}.numel() else 0")
    out.append(f"r = repr({v}.shape)")
for po in ["precision=2", "sci_mode=True", "sci_mode=False", "threshold=5", "edgeitems=1", "linewidth=20", "profile='short'", "profile='full'"]:
    for v in vals[:25]:
        out.append(f"torch.set_printoptions({po}); r = repr({v}); torch.set_printoptions(profile='default')")
# Size / dtype / device
objs = ["torch.Size([2, 3])", "torch.Size([])", "torch.Size((2,))"]
for o in objs:
    for e in ["o + (1,)", "(1,) + o", "o + [1]", "o * 2", "o[0]", "o[-1:]", "o[5]", "o.numel()", "o == (2, 3)", "o == [2, 3]", "hash(o) == hash(tuple(o))", "repr(o)", "str(o)", "o.count(2)", "o.index(3)", "list(o)", "o[::-1]", "type(o[1:]).__name__", "type(o + (1,)).__name__", "type(o * 2).__name__", "len(o)", "o < (3,)", "tuple(o)", "o.__reduce__()[1] if False else 0", "torch.zeros(o).shape", "torch.Size(o)", "torch.Size([o[0]] if len(o) else [])", "isinstance(o, tuple)"]:
        out.append(f"o = {o}; r = {e}")
for e in ["torch.float32 == torch.float", "torch.float32 is torch.float", "str(torch.float32)", "repr(torch.int8)", "torch.float32.is_floating_point", "torch.int8.is_signed", "torch.uint8.is_signed", "torch.bool.is_signed", "torch.float16.itemsize if hasattr(torch.float16, 'itemsize') else 2", "torch.bfloat16.is_complex", "hash(torch.float32) == hash(torch.float)", "torch.float32 == 'float32'", "torch.float32 != torch.float64", "torch.finfo(torch.float16).max", "torch.finfo(torch.bfloat16).eps", "torch.finfo(torch.float32).tiny", "torch.finfo().bits", "torch.iinfo(torch.int8).min", "torch.iinfo(torch.uint8).max", "torch.finfo(torch.int32)", "torch.iinfo(torch.float32)", "torch.finfo(torch.float64).resolution", "torch.finfo(torch.float16).smallest_normal", "str(torch.finfo(torch.float32).dtype)", "torch.iinfo(torch.int64).bits",
          "torch.device('cpu')", "str(torch.device('cpu', 0))", "torch.device('cpu').type", "torch.device('cpu').index", "torch.device('cpu:0').index", "torch.device('cuda:1').type", "torch.device('cuda', 0) == torch.device('cuda:0')", "torch.device(torch.device('cpu'))", "torch.device('cpu', 'x')", "torch.device('cpu:1:2')", "torch.device(' cpu')", "torch.device('CPU')", "torch.device('meta')", "torch.device('mps')", "hash(torch.device('cpu')) == hash(torch.device('cpu'))", "torch.zeros(2).device == torch.device('cpu')", "str(torch.zeros(2).device)", "torch.zeros(2, device='cpu:0').device", "torch.zeros(2, device=torch.device('cpu')).device.type", "repr(torch.device('cpu'))", "torch.zeros(2).to('cpu').device", "torch.zeros(2).is_cuda", "torch.zeros(2).get_device()", "torch.zeros(2).cpu().device",
          "torch.get_default_dtype()", "torch.is_tensor([1])", "torch.is_tensor(torch.zeros(1))", "torch.is_floating_point(torch.zeros(1))", "torch.is_floating_point(1.0)", "torch.numel(torch.zeros(2, 3))", "torch.promote_types(torch.uint8, torch.int8)", "torch.promote_types(torch.bool, torch.float16)", "torch.promote_types(torch.bfloat16, torch.float16)", "torch.can_cast(torch.float32, torch.int32)", "torch.can_cast(torch.int32, torch.bool)", "torch.can_cast(torch.bool, torch.uint8)", "torch.result_type(torch.tensor([1], dtype=torch.uint8), -1)", "torch.result_type(torch.tensor(1, dtype=torch.uint8), torch.tensor([1], dtype=torch.int8))", "torch.result_type(torch.tensor([1.], dtype=torch.float16), 1e10)", "torch.result_type(torch.tensor([True]), 1.5)"]:
    out.append(f"r = {e}")
# requires_grad / view / reshape errors
for dt in ["int64", "int32", "bool", "uint8", "float16", "bfloat16", "float64"]:
    x = f"x = torch.zeros(2, 3, dtype=torch.{dt})"
    for e in ["x.requires_grad_()", "x.requires_grad = True", "torch.zeros(2, dtype=torch.%s, requires_grad=True)" % dt, "torch.tensor([1, 2], dtype=torch.%s, requires_grad=True)" % dt, "torch.ones_like(x, requires_grad=True)", "torch.nn.Parameter(x)", "torch.nn.Parameter(x, requires_grad=False)", "x.requires_grad_(False)", "torch.arange(3, dtype=torch.%s, requires_grad=True)" % dt, "torch.full((2,), 1, dtype=torch.%s, requires_grad=True)" % dt, "x.new_zeros(2, requires_grad=True)", "torch.empty(2, dtype=torch.%s).requires_grad_(True)" % dt, "torch.autograd.Variable(x, requires_grad=True)", "x.detach().requires_grad_()", "torch.randn(2, requires_grad=True).to(torch.%s)" % dt, "torch.randn(2, requires_grad=True).to(torch.%s).requires_grad" % dt]:
        out.append(f"{x}; r = {e}")
for x in ["torch.arange(12.).reshape(3, 4).t()", "torch.arange(24.).reshape(2, 3, 4)[:, :, ::2]", "torch.arange(12.).reshape(3, 4)[:, 1:]", "torch.arange(4.).expand(3, 4)", "torch.arange(12.).reshape(3, 4)", "torch.tensor(2.)", "torch.empty(0, 4)", "torch.arange(24.).reshape(2, 3, 4).permute(1, 0, 2)"]:
    for e in ["x.view(-1)", "x.view(12)", "x.view(4, 3)", "x.view(2, -1)", "x.view(-1, -1)", "x.view(5)", "x.view(0)", "x.view(-1, 0)", "x.view(torch.int32)", "x.view(torch.int16)", "x.view(torch.uint8)", "x.view(torch.float64)", "x.view(torch.bool)", "x.view(2, 2, 3)", "x.view(1, -1)", "x.view(())", "x.view([])", "x.view(3, 4, 1)", "x.view(-2)", "x.view(1.5)", "x.view((2, 6))", "x.view(size=(12,))", "x.reshape(-1)", "x.reshape(-1, 5)", "x.reshape(4, -1)", "x.reshape(())", "x.reshape(2.0)", "x.flatten()", "x.flatten(1)", "x.flatten(0, -1)", "x.flatten(2, 1)", "x.unflatten(0, (-1, 1))", "x.unflatten(-1, (2, 2))", "x.unflatten(0, (2, 2))", "x.view_as(torch.zeros(12))", "x.reshape_as(torch.zeros(4, 3))", "x.squeeze(5)", "x.unsqueeze(3)", "x.unsqueeze(-4)", "x.transpose(0, 5)", "x.permute(0)", "x.permute(1, 1)", "x.permute(1, 0)", "x.expand(2, 3, 4)", "x.expand(-1, -1)", "x.expand(2, -1, -1)", "x.expand(5)", "x.narrow(0, 1, 5)", "x.narrow(0, -1, 1)", "x.select(0, 3)", "x.unfold(0, 2, 1)", "x.contiguous().view(-1)", "x.T", "x.mT", "x.H", "x.movedim(0, -1)", "x.split(2)", "x.chunk(0)", "x.chunk(5, 1)", "x.tensor_split(3)", "x.is_contiguous()", "x.stride()", "x.storage_offset()", "x.stride(1)", "x.stride(-1)", "x.size(-1)", "x.size(3)", "x.dim()", "x.ndimension()", "x.nelement()"]:
        out.append(f"x = {x}; r = {e}")
print('\n'.join(out))
