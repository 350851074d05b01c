import torch, io, zipfile, pickle, collections, os, struct
D = '/tmp/diff6/ck'
os.makedirs(D, exist_ok=True)
snips = []
def add(name, data):
    p = f'{D}/{name}'
    open(p, 'wb').write(data)
    for wo in ('True', 'False'):
        if wo == 'False' and name.startswith('evil'):
            continue  # torch would run the code
        snips.append(f"r = torch.load('{p}', weights_only={wo})")
    snips.append(f"r = torch.load(open('{p}', 'rb'), weights_only=True)")
    snips.append(f"r = torch.load(io.BytesIO(open('{p}', 'rb').read()), weights_only=True, map_location='cpu')")

buf = io.BytesIO(); torch.save({'w': torch.arange(6.).reshape(2, 3), 'b': torch.tensor([1, 2]), 'n': 3, 's': 'x'}, buf)
good = buf.getvalue()
add('good.pt', good)
for n in [0, 1, 2, 4, 10, 30, 64, 100, 200, len(good) // 2, len(good) - 100, len(good) - 22, len(good) - 1]:
    add(f'trunc{n}.pt', good[:n])
# byte flips across the file
for pos in range(0, len(good), max(1, len(good) // 40)):
    b = bytearray(good); b[pos] ^= 0xFF
    add(f'flip{pos}.pt', bytes(b))

class Stor:
    def __init__(self, typ, key, numel): self.typ, self.key, self.numel = typ, key, numel
class P(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Stor):
            return ('storage', obj.typ, obj.key, 'cpu', obj.numel)
        return None
class T:
    def __init__(self, stor, off, size, stride, rg=False):
        self.a = (stor, off, size, stride, rg, collections.OrderedDict())
    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.a)
def mkzip(obj, files, prefix='archive', version=b'3\n', pkl=None, order=None):
    b = io.BytesIO()
    if pkl is None:
        pb = io.BytesIO(); P(pb, protocol=2).dump(obj); pkl = pb.getvalue()
    with zipfile.ZipFile(b, 'w') as z:
        if version is not None:
            z.writestr(f'{prefix}/version', version)
        z.writestr(f'{prefix}/data.pkl', pkl)
        for k, v in files.items():
            z.writestr(f'{prefix}/data/{k}', v)
        if order is not None:
            z.writestr(f'{prefix}/byteorder', order)
    return b.getvalue()
f24 = struct.pack('<6f', *range(6))
S = torch.FloatStorage
cases = {
 'ok_manual': (T(Stor(S, '0', 6), 0, (2, 3), (3, 1)), {'0': f24}),
 'short_storage': (T(Stor(S, '0', 6), 0, (2, 3), (3, 1)), {'0': f24[:8]}),
 'size_beyond': (T(Stor(S, '0', 6), 0, (4, 3), (3, 1)), {'0': f24}),
 'offset_beyond': (T(Stor(S, '0', 6), 5, (2, 3), (3, 1)), {'0': f24}),
 'neg_size': (T(Stor(S, '0', 6), 0, (-2, 3), (3, 1)), {'0': f24}),
 'neg_stride': (T(Stor(S, '0', 6), 5, (2, 3), (-3, -1)), {'0': f24}),
 'neg_offset': (T(Stor(S, '0', 6), -1, (2, 3), (3, 1)), {'0': f24}),
 'huge_size': (T(Stor(S, '0', 6), 0, (2**62, 2**62), (1, 1)), {'0': f24}),
 'missing_record': (T(Stor(S, '0', 6), 0, (2, 3), (3, 1)), {}),
 'numel_lies': (T(Stor(S, '0', 10**12), 0, (2, 3), (3, 1)), {'0': f24}),
 'wrong_key': (T(Stor(S, '7', 6), 0, (2, 3), (3, 1)), {'0': f24}),
 'stride_count': (T(Stor(S, '0', 6), 0, (2, 3), (3,)), {'0': f24}),
 'float_size': (T(Stor(S, '0', 6), 0, (2.0, 3), (3, 1)), {'0': f24}),
 'str_size': (T(Stor(S, '0', 6), 0, 'ab', (3, 1)), {'0': f24}),
 'double_storage': (T(Stor(torch.DoubleStorage, '0', 3), 0, (3,), (1,)), {'0': f24}),
 'half_odd': (T(Stor(torch.HalfStorage, '0', 3), 0, (3,), (1,)), {'0': b'\x00' * 5}),
 'shared': ([T(Stor(S, '0', 6), 0, (2, 3), (3, 1)), T(Stor(S, '0', 6), 1, (5,), (1,))], {'0': f24}),
 'overlap_view': (T(Stor(S, '0', 6), 0, (3, 3), (1, 1)), {'0': f24}),
 'zero_stride': (T(Stor(S, '0', 6), 0, (4, 3), (0, 1)), {'0': f24}),
 'rg_int': (T(Stor(torch.LongStorage, '0', 3), 0, (3,), (1,), True), {'0': b'\x00' * 24}),
 'nested_deep': (None, {}),
}
for name, (obj, files) in cases.items():
    if name == 'nested_deep':
        o = [];  cur = o
        for _ in range(5000):
            n = []; cur.append(n); cur = n
        try:
            add('deep.pt', mkzip(o, {}))
        except RecursionError:
            pass
        continue
    add(name + '.pt', mkzip(obj, files))
add('big_order.pt', mkzip(T(Stor(S, '0', 6), 0, (2, 3), (3, 1)), {'0': f24}, order=b'big'))
add('bogus_order.pt', mkzip(T(Stor(S, '0', 6), 0, (2, 3), (3, 1)), {'0': f24}, order=b'middle'))
add('no_version.pt', mkzip(T(Stor(S, '0', 6), 0, (2, 3), (3, 1)), {'0': f24}, version=None))
add('version99.pt', mkzip(T(Stor(S, '0', 6), 0, (2, 3), (3, 1)), {'0': f24}, version=b'99\n'))
add('version_text.pt', mkzip(T(Stor(S, '0', 6), 0, (2, 3), (3, 1)), {'0': f24}, version=b'abc'))
add('two_prefix.pt', mkzip(1, {}, prefix='a/b'))
add('empty_pickle.pt', mkzip(None, {}, pkl=b''))
add('garbage_pickle.pt', mkzip(None, {}, pkl=b'\x80\x02garbage'))
add('pickle_no_stop.pt', mkzip(None, {}, pkl=pickle.dumps([1, 2], protocol=2)[:-1]))
# evil pickles: GLOBAL os.system, builtins.eval, subclass tricks
evil = {
 'evil_system': b"cos\nsystem\n(S'echo PWNED > /tmp/diff6/pwned'\ntR.",
 'evil_eval': b"c__builtin__\neval\n(S'1+1'\ntR.",
 'evil_builtins': b"cbuiltins\ngetattr\n(cbuiltins\nobject\nS'__subclasses__'\ntR.",
 'evil_torch_func': b"ctorch\nload\n(S'/etc/passwd'\ntR.",
 'evil_collections_build': b"ccollections\nOrderedDict\n)R(dS'a'\nI1\nsb.",
 'evil_inst': b"(S'echo hi'\nios\nsystem\n.",
 'evil_setattr_build': b"ccollections\nOrderedDict\n)R}(S'__class__'\ncbuiltins\nobject\nsb.",
 'evil_ext': b"\x80\x02\x82\x01.",
 'evil_reduce_numpy': b"cnumpy.core.multiarray\n_reconstruct\n(cnumpy\nndarray\n(I0\ntS'b'\ntR.",
}
for k, v in evil.items():
    add(k + '.pt', mkzip(None, {}, pkl=v))
    add(k + '_raw.pt', v)
# safetensors-looking files
import json
def st(header, body=b''):
    h = json.dumps(header).encode() if not isinstance(header, bytes) else header
    return struct.pack('<Q', len(h)) + h + body
sts = {
 'st_ok': st({'a': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]}}, b'\x00' * 8),
 'st_short': st({'a': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]}}, b'\x00' * 4),
 'st_hugelen': struct.pack('<Q', 2**62) + b'{}',
 'st_badjson': st(b'{not json', b''),
 'st_baddtype': st({'a': {'dtype': 'X9', 'shape': [2], 'data_offsets': [0, 8]}}, b'\x00' * 8),
 'st_negshape': st({'a': {'dtype': 'F32', 'shape': [-2], 'data_offsets': [0, 8]}}, b'\x00' * 8),
 'st_overlap': st({'a': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]}, 'b': {'dtype': 'F32', 'shape': [2], 'data_offsets': [4, 12]}}, b'\x00' * 12),
 'st_mismatch': st({'a': {'dtype': 'F32', 'shape': [3], 'data_offsets': [0, 8]}}, b'\x00' * 8),
}
for k, v in sts.items():
    add(k + '.safetensors', v)
    snips.append(f"import kiln; r = kiln.serialization.load_file('{D}/{k}.safetensors') if torch.__name__ == 'kiln' else 'skip'")
open('/tmp/diff6/ck.txt', 'w').write('\n'.join(snips) + '\n')
print(len(snips))
