out = []
sizes = ["2**62, 2**62", "-1", "2**63", "-2**63", "2**31, 2**31, 2**31", "2**40, 0", "0, -1", "3, -2", "2**63-1", "1.5", "True", "torch.tensor(3)",
         "torch.tensor([2, 3])", "torch.tensor(-1)", "np.int64(3)", "None", "'3'", "[2, None]", "(2, 3.0)", "float('nan')", "float('inf')", "2**64"]
for s in sizes:
    for f in ["zeros({s})", "ones({s})", "empty({s})", "full(({s},), 1)", "rand({s})", "randn({s})", "randint(5, ({s},))",
              "arange({s})", "eye({s})", "ones(2).expand({s})", "ones(1).repeat({s})", "ones(6).view({s})", "ones(6).reshape({s})",
              "ones(6).new_zeros({s})", "zeros(2).resize_({s})", "tensor([1.]).tile(({s},))", "empty_strided(({s},), (1,))",
              "ones(3).unflatten(0, ({s},))", "linspace(0, 1, {s})", "logspace(0, 1, {s})", "randperm({s})", "tril_indices({s}, 3)",
              "ones(2, 3).narrow(0, 0, {s})", "ones(4).unfold(0, {s}, 1)", "ones(4).as_strided(({s},), (1,))", "ones(4)[{s}]",
              "nn.functional.pad(torch.ones(2, 3), ({s}, 0))", "ones(2).repeat_interleave({s})", "ones(4).roll({s})",
              "ones(4).topk({s})", "ones(4).kthvalue({s})", "ones(4).chunk({s})", "ones(4).split({s})", "ones(4).tensor_split({s})",
              "ones(3, 4).movedim({s}, 0)", "ones(3).diag({s})", "ones(4).new_full(({s},), 2)", "ones(4).std({s})", "full(({s},), 1).sum()"]:
        expr = f.format(s=s)
        pre = "torch." if not expr.startswith("nn.") else "torch."
        out.append(f"r = {pre}{expr}")
# NaN/inf in integer casts
for v in ["float('nan')", "float('inf')", "-float('inf')", "1e20", "-1e20", "2.**63", "-2.**63", "2.**64", "3e38", "-0.5", "255.5", "300."]:
    for dt in ["int64", "int32", "int16", "int8", "uint8", "bool"]:
        for src in ["float32", "float64", "float16", "bfloat16"]:
            out.append(f"r = torch.tensor([{v}], dtype=torch.{src}).to(torch.{dt})")
        out.append(f"r = torch.tensor([{v}], dtype=torch.{dt})")
        out.append(f"r = torch.tensor({v}, dtype=torch.{dt})")
        out.append(f"r = torch.full((1,), {v}, dtype=torch.{dt})")
        out.append(f"r = torch.zeros(1, dtype=torch.{dt}).fill_({v})")
        out.append(f"r = torch.zeros(1, dtype=torch.{dt}) + {v}")
        out.append(f"r = torch.arange(0, {v}, dtype=torch.{dt})")
    out.append(f"r = int(torch.tensor({v}))")
    out.append(f"r = torch.tensor({v}).long()")
    out.append(f"r = torch.tensor({v}).item().__int__()")
    out.append(f"r = torch.ones(3)[torch.tensor({v})]")
    out.append(f"r = torch.ones(3).view(torch.tensor({v}))")
# deep recursion and odd nested data for tensor()
for depth in [10, 64, 100, 500, 1000, 5000, 100000]:
    out.append(f"import sys; d = 1.⏎for _ in range({depth}): d = [d]⏎r = torch.tensor(d).shape")
    out.append(f"d = []⏎for _ in range({depth}): d = [d]⏎r = torch.tensor(d).shape")
    out.append(f"d = 1.⏎for _ in range({depth}): d = (d,)⏎r = torch.as_tensor(d).dim()")
out += ["d = []; d.append(d); r = torch.tensor(d)", "d = [1]; d.append(d); r = torch.tensor(d)", "r = torch.tensor([[1, 2], [3]])",
        "r = torch.tensor([[1, 2], 3])", "r = torch.tensor([1, [2]])", "r = torch.tensor([[], [1]])", "r = torch.tensor([iter([1])])",
        "r = torch.tensor(range(5))", "r = torch.tensor(x for x in range(3))", "r = torch.tensor({1, 2})", "r = torch.tensor(b'ab')",
        "r = torch.tensor(bytearray(b'ab'))", "r = torch.tensor('ab')", "r = torch.tensor(['a'])", "r = torch.tensor([None])",
        "r = torch.tensor([1, None])", "r = torch.tensor([torch.tensor(1), 2])", "r = torch.tensor([torch.tensor([1]), torch.tensor([2])])",
        "r = torch.tensor([np.float64(1.), 2])", "r = torch.tensor([np.array(1.), 2.])", "r = torch.tensor([[np.float32(1.)]])",
        "r = torch.tensor(memoryview(b'ab'))", "r = torch.tensor(np.array([1, 2], dtype=np.uint16))", "r = torch.tensor(np.array([1, 2], dtype=np.uint32))",
        "r = torch.tensor(np.array([1, 2], dtype=np.uint64))", "r = torch.tensor(np.array([1, 2], dtype=np.complex64))", "r = torch.tensor(np.array(['a']))",
        "r = torch.tensor(np.zeros((2, 3)).T).stride()", "r = torch.tensor(np.zeros((2, 3))[:, ::2]).stride()", "r = torch.from_numpy(np.zeros((2, 3))[:, ::-1])",
        "r = torch.from_numpy(np.zeros(3, dtype='>f4'))", "r = torch.from_numpy(np.zeros(3, dtype=np.float16)).dtype", "r = torch.from_numpy(np.zeros((2, 0)).T).stride()",
        "r = torch.from_numpy(np.lib.stride_tricks.as_strided(np.zeros(3), (3, 3), (8, 0))).stride()", "r = torch.from_numpy(np.zeros(3, dtype=[('a', 'f4')]))",
        "r = torch.from_numpy([1, 2])", "r = torch.from_numpy(np.float64(1.))", "r = torch.from_numpy(np.zeros((2, 3))[::2, 1:]).storage_offset()",
        "r = torch.frombuffer(b'abcd', dtype=torch.int16)", "r = torch.frombuffer(b'abc', dtype=torch.int16)", "r = torch.frombuffer(b'', dtype=torch.int16)",
        "r = torch.frombuffer(bytearray(b'abcd'), dtype=torch.int8, count=2, offset=1)", "r = torch.frombuffer(bytearray(b'abcd'), dtype=torch.int8, count=9)",
        "r = torch.frombuffer(bytearray(b'abcd'), dtype=torch.int8, offset=-1)", "r = torch.frombuffer(bytearray(b'abcd'), dtype=torch.int8, offset=5)"]
# malformed torch.load / safetensors inputs
for data in ["b''", "b'PK'", "b'PK\\x03\\x04' + b'\\x00' * 100", "b'\\x80\\x02'", "b'\\x80\\x02}q\\x00.'", "b'\\x80\\x05K\\x01.'", "b'garbage' * 10",
             "b'\\x08\\x00\\x00\\x00\\x00\\x00\\x00\\x00{}      '", "b'\\xff' * 8 + b'{}'", "b'\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00{}'",
             "b'\\x10\\x00\\x00\\x00\\x00\\x00\\x00\\x00{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}'",
             "(lambda h: len(h).to_bytes(8, 'little') + h)(b'{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}') + b'\\x00' * 8",
             "(lambda h: len(h).to_bytes(8, 'little') + h)(b'{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}') + b'\\x00' * 4",
             "(lambda h: len(h).to_bytes(8, 'little') + h)(b'{\"a\": {\"dtype\": \"F32\", \"shape\": [-2], \"data_offsets\": [0, 8]}}') + b'\\x00' * 8",
             "(lambda h: len(h).to_bytes(8, 'little') + h)(b'{\"a\": {\"dtype\": \"X99\", \"shape\": [2], \"data_offsets\": [0, 8]}}') + b'\\x00' * 8",
             "(lambda h: len(h).to_bytes(8, 'little') + h)(b'[1, 2]') + b'\\x00' * 8"]:
    for wo in ["True", "False"]:
        out.append(f"r = torch.load(io.BytesIO({data}), weights_only={wo})")
    out.append(f"import pickle; buf = io.BytesIO(); torch.save(torch.arange(4.), buf); b = buf.getvalue(); r = torch.load(io.BytesIO(b[:len(b) // 3]), weights_only=True)")
for bad in ["None", "5", "'/nonexistent/file.pt'", "io.StringIO('abc')", "b'abc'"]:
    out.append(f"r = torch.load({bad}, weights_only=True)")
    out.append(f"r = torch.save(torch.ones(1), {bad})")
print('\n'.join(out))
