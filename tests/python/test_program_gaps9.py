

# --- torch's seven-argument _load_from_state_dict and _save_to_state_dict ---------------------------------------

def _state_dict_overrides(lib):
    from collections import OrderedDict
    nn = lib.nn

    class FrozenBatchNorm2d(nn.Module):  # DETR / torchvision's, as written
        def __init__(self, n):
            super(FrozenBatchNorm2d, self).__init__()
            self.register_buffer("weight", lib.ones(n))
            self.register_buffer("bias", lib.zeros(n))
            self.register_buffer("running_mean", lib.zeros(n))
            self.register_buffer("running_var", lib.ones(n))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                  error_msgs):
            num_batches_tracked_key = prefix + 'num_batches_tracked'
            if num_batches_tracked_key in state_dict:
                del state_dict[num_batches_tracked_key]
            super(FrozenBatchNorm2d, self)._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                                                 missing_keys, unexpected_keys, error_msgs)

    class Saver(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(lib.ones(2))

        def _save_to_state_dict(self, destination, prefix, keep_vars):
            super()._save_to_state_dict(destination, prefix, keep_vars)
            destination[prefix + "a_doubled"] = self.a.detach() * 2

    class Versioned(nn.Module):
        _version = 2

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.zeros(2))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                  error_msgs):
            if local_metadata.get("version", None) is None or local_metadata["version"] < 2:
                if prefix + "old_w" in state_dict:
                    state_dict[prefix + "w"] = state_dict.pop(prefix + "old_w")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                          error_msgs)

    out = []
    bn = nn.BatchNorm2d(3)
    bn.running_mean += 1
    f = FrozenBatchNorm2d(3)
    out.append((str(f.load_state_dict(bn.state_dict())), f.running_mean.tolist()))
    out.append(list(nn.Sequential(Saver()).state_dict()))
    old = OrderedDict(old_w=lib.ones(2))
    old._metadata = OrderedDict({"": {"version": 1}})
    v = Versioned()
    out.append((str(v.load_state_dict(old)), v.w.tolist()))
    new = OrderedDict(old_w=lib.ones(2))
    new._metadata = OrderedDict({"": {"version": 2}})
    out.append(str(Versioned().load_state_dict(new, strict=False)))
    # BatchNorm: a version-1 (or unversioned) state_dict without num_batches_tracked loads; a version-2 one misses it
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    out.append(str(nn.BatchNorm2d(3).load_state_dict(sd, strict=False)))
    sd._metadata[""]["version"] = 1
    out.append(str(nn.BatchNorm2d(3).load_state_dict(sd)))
    out.append(str(nn.BatchNorm2d(3).load_state_dict(dict(sd))))
    return out


def test_seven_argument_load_from_state_dict_and_save_to_state_dict_overrides():
    rt, rk = _state_dict_overrides(torch), _state_dict_overrides(kiln)
    assert rk == rt
