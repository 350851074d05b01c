# Tensor methods and attributes programs use, torch 2.x functions, in-place on views, complex scalars,
# out= aliasing an input, hostile inputs.
out = []
A = ["torch.arange(6.).reshape(2, 3)", "torch.arange(6).reshape(2, 3)", "torch.tensor([True, False])",
     "torch.tensor(2.5)", "torch.zeros(0, 3)", "torch.arange(6.).reshape(2, 3).t()", "torch.arange(4.).half()",
     "torch.arange(24.).reshape(1, 2, 3, 4)"]
M = ["new_tensor([1, 2])", "new_tensor([1., 2.])", "new_tensor(3)", "new_tensor([True])", "new_tensor([1, 2], dtype=torch.int8)",
     "new_zeros(2, 3)", "new_zeros((2,))", "new_zeros([])", "new_full((2,), 7)", "new_full((2,), 2.5)", "new_full((2,), True)",
     "new_full((2,), 2.5, dtype=torch.int32)", "new_ones(2, dtype=torch.bool)", "new_empty(0).shape", "new_tensor(torch.tensor([1, 2]))",
     "type()", "type(torch.int32)", "type('torch.IntTensor')", "type(torch.IntTensor)", "type_as(torch.tensor([1]))",
     "type_as(torch.tensor([1.], dtype=torch.float64))", "to(torch.tensor([1], dtype=torch.int8))", "to(torch.zeros(1, dtype=torch.float64), copy=True)",
     "element_size()", "nbytes", "itemsize", "stride()", "stride(0)", "stride(-1)", "stride(5)", "storage_offset()",
     "is_contiguous()", "is_contiguous(memory_format=torch.channels_last)", "is_contiguous(memory_format=torch.contiguous_format)",
     "is_contiguous(memory_format=torch.preserve_format)", "contiguous(memory_format=torch.channels_last)",
     "contiguous(memory_format=torch.channels_last).stride()", "contiguous(memory_format=torch.preserve_format)",
     "numpy()", "numpy(force=True)", "numpy(force=False)", "tolist()", "item()", "__bool__()", "__index__()", "__len__()",
     "__int__()", "__float__()", "__complex__()", "__reversed__()", "list(__iter__())", "__contains__(1)", "__contains__(1.5)",
     "__contains__(torch.tensor([0., 1., 2.]))", "__format__('')", "__format__('.2f')", "__format__('>10')", "__repr__()",
     "__hash__() == id(__builtins__)", "dim()", "ndim", "ndimension()", "nelement()", "numel()", "size()", "size(-1)", "size(3)",
     "shape", "T", "mT", "H", "mH", "real", "imag", "is_leaf", "grad_fn", "is_floating_point()", "is_complex()",
     "is_signed()", "is_inference()", "is_conj()", "is_neg()", "is_sparse", "is_quantized", "is_meta", "is_cuda", "layout", "device",
     "get_device()", "data_ptr() == 0", "untyped_storage().nbytes()", "storage().size()", "storage().dtype",
     "clone(memory_format=torch.channels_last).stride()", "to(memory_format=torch.channels_last).stride()",
     "half().element_size()", "bool().nbytes", "element_size() * numel() == nbytes", "abs().__format__('')", "float().__format__('.3f')",
     "__deepcopy__({}).stride()", "__deepcopy__({})", "__reduce_ex__(2)[0].__name__", "dim_order()", "is_pinned()", "is_shared()",
     "nan_to_num()", "apply_(lambda v: v * 2)", "map_(torch.ones(1), lambda a, b: a + b)", "sum_to_size(1)", "sum_to_size(3)",
     "expand_as(torch.ones(2, 2, 3))", "view_as(torch.ones(6))", "reshape_as(torch.ones(3, 2))", "resize_(0)", "resize_(7)",
     "resize_as_(torch.ones(1))", "unfold(0, 1, 1)", "unfold(0, 5, 1)", "as_strided((2,), (1,))", "as_strided((2,), (-1,))",
     "as_strided((100,), (1,))", "fill_diagonal_(5)", "is_set_to(torch.ones(1))", "new_empty_strided((2,), (1,)).stride()",
     "__array__().dtype", "__array__(np.float64).dtype", "__iter__().__next__()", "__setstate__", "requires_grad_()",
     "retain_grad()", "detach_().is_leaf", "share_memory_().is_shared()", "pin_memory()", "char().dtype", "byte()", "short()", "cdouble()"]
for a in A:
    for m in M:
        out.append(f"x = {a}; r = x.{m}")
for v in ["float('nan')", "float('inf')", "-float('inf')", "-0.0", "1e-40", "3.4e38", "1e300", "2**63-1", "-2**63", "True", "0.1", "123456789.123"]:
    for dt in ["float32", "float64", "float16", "bfloat16", "int64", "int32", "bool", "uint8", "int8"]:
        out.append(f"r = repr(torch.tensor({v}).to(torch.{dt}))")
        out.append(f"r = repr(torch.tensor([{v}, 1.5]).to(torch.{dt}))")
        out.append(f"r = format(torch.tensor({v}).to(torch.{dt}), '.3g')")
        out.append(f"r = format(torch.tensor({v}).to(torch.{dt}), '')")
        out.append(f"r = str(torch.tensor({v}).to(torch.{dt}).item())")
        out.append(f"r = int(torch.tensor({v}).to(torch.{dt}))")
        out.append(f"r = float(torch.tensor({v}).to(torch.{dt}))")
        out.append(f"r = bool(torch.tensor({v}).to(torch.{dt}))")
        out.append(f"r = torch.tensor({v}).to(torch.{dt}).__index__()")
        out.append(f"r = hash(torch.tensor({v}).to(torch.{dt})) is not None")
for x in ["torch.tensor(2)", "torch.tensor(2.)", "torch.tensor([2])", "torch.tensor([])", "torch.tensor(True)", "torch.ones(2, 2)"]:
    for m in ["len(x)", "list(x)", "list(reversed(x))", "bool(x)", "x.__index__()", "operator.index(x)", "range(10)[x]",
              "[1, 2, 3][x]", "x in x", "2 in x", "'a' in x", "None in x", "iter(x)", "hash(x) == hash(x)",
              "copy.deepcopy(x)", "copy.copy(x)", "{x: 1}[x]", "divmod(x, 2)", "round(x)", "round(x, 1)", "math.floor(x)",
              "math.trunc(x)", "abs(x)", "-x", "~x", "complex(x)", "int(x)", "float(x)", "hex(x)", "bin(x)", "'%d' % x",
              "'%.2f' % x", "'{:d}'.format(x)", "f'{x:.1f}'", "max(x, 1) if x.numel() == 1 else None", "sorted(x.reshape(-1))",
              "sum(x)", "pow(x, 2, 5)", "x.__array_priority__", "np.asarray(x).dtype", "np.array(x, dtype=np.float16).dtype",
              "x.__cuda_array_interface__", "x.__dlpack_device__()"]:
        out.append(f"import operator, copy; x = {x}; r = {m}")
print('\n'.join(out))
