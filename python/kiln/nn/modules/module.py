"""kiln.nn.Module: the base class of all layers, mirroring torch.nn.Module.

Assigning a Parameter, a Module or (to a registered name) a buffer to an attribute
registers it; parameters(), state_dict() and friends walk the registered tree.
"""
import functools
import inspect
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import _C
from ..._device import device
from ..._device import check_cpu
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Buffer, Parameter, is_lazy


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _typename(v):
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _quoted(keys):
    return ", ".join(f'"{k}"' for k in keys)


def _addindent(s, n):
    lines = s.split("\n")
    return lines[0] if len(lines) == 1 else "\n".join([lines[0]] + [" " * n + line for line in lines[1:]])


def zero_grads(params, set_to_none):
    """Resets each parameter's .grad: to None, or to zeros in place (detached first if it has a graph).
    Shared by Module.zero_grad and Optimizer.zero_grad."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        with no_grad():
            if p.grad.grad_fn is not None:
                p.grad = p.grad.detach()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()

class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: the handle the register_*_hook methods return; remove() takes the
    hook out of its dict (and of extra_dict, if given). The dicts are held weakly, as torch's."""
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = extra_dict if isinstance(extra_dict, (list, tuple)) else ([extra_dict] if extra_dict is not None else [])
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _checking_device(init):
    """A kiln module's __init__ that refuses device= other than the CPU, as torch's CPU-only builds do when
    the module makes its parameters there."""
    @functools.wraps(init)
    def checked(self, *args, **kwargs):
        check_cpu(kwargs.get("device"), factory=True)  # the parameters are made there
        return init(self, *args, **kwargs)
    return checked


class Module:
    """Base class for neural-network modules; subclasses define forward()."""

    training: bool
    # None until a backward hook is registered: False for register_backward_hook's (deprecated) kind,
    # True for register_full_backward_hook's; a module takes one kind only, as torch
    _is_full_backward_hook = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and cls.__module__.startswith("kiln.") and \
                "device" in inspect.signature(init).parameters:
            cls.__init__ = _checking_device(init)

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        pre, post = d.get("_forward_pre_hooks"), d.get("_forward_hooks")
        bw, bw_pre = d.get("_backward_hooks"), d.get("_backward_pre_hooks")
        if not pre and not post and not bw and not bw_pre:
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(pre, post, bw, bw_pre, args, kwargs)

    def _call_with_hooks(self, pre, post, bw, bw_pre, args, kwargs):
        # torch's order: forward pre-hooks may replace the inputs, forward hooks the output; backward
        # hooks wrap the (final) inputs and the output (_backward_hooks.py).
        with_kwargs = self.__dict__.get("_hooks_with_kwargs", ())
        for hook_id, hook in list(pre.items()) if pre else ():
            if hook_id in with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        legacy_hooks = None
        if bw and self.__dict__.get("_is_full_backward_hook") is False:  # register_backward_hook's
            legacy_hooks, bw = list(bw.values()), None
        backward_hook = None
        if bw or bw_pre:
            from ._backward_hooks import BackwardHook
            backward_hook = BackwardHook(self, list(bw.values()) if bw else [], list(bw_pre.values()) if bw_pre else [])
            args = backward_hook.setup_input_hook(args)
        always = self.__dict__.get("_forward_hooks_always_called", ())
        try:
            output = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in list(post.items()) if post else ():
                if hook_id in always:
                    try:
                        hook(self, args, kwargs, None) if hook_id in with_kwargs else hook(self, args, None)
                    except Exception:  # noqa: BLE001 - the forward's error is the one raised, as torch
                        pass
            raise
        for hook_id, hook in list(post.items()) if post else ():
            result = hook(self, args, kwargs, output) if hook_id in with_kwargs else hook(self, args, output)
            if result is not None:
                output = result
        if backward_hook is not None:
            output = backward_hook.setup_output_hook(output)
        if legacy_hooks:
            from ._legacy_backward_hooks import attach
            attach(self, legacy_hooks, args, output)
        return output

    # ---- hooks ----
    def _hook_dict(self, name):
        hooks = self.__dict__.get(name)
        if hooks is None:
            hooks = OrderedDict()
            object.__setattr__(self, name, hooks)
        return hooks

    def _add_hook(self, store, hook, prepend=False, with_kwargs=False, always_call=False):
        handle = RemovableHandle(self._hook_dict(store))
        self._hook_dict(store)[handle.id] = hook
        if prepend:
            self._hook_dict(store).move_to_end(handle.id, last=False)
        for flag, name in ((with_kwargs, "_hooks_with_kwargs"), (always_call, "_forward_hooks_always_called")):
            if flag:
                if name not in self.__dict__:
                    object.__setattr__(self, name, set())
                self.__dict__[name].add(handle.id)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) runs before forward(); a non-None result replaces args (a tuple, or one
        value). With with_kwargs: hook(module, args, kwargs), returning None or (args, kwargs).
        prepend: run before the hooks already registered. Returns a handle whose remove() unregisters it."""
        return self._add_hook("_forward_pre_hooks", hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) runs after forward(); a non-None result replaces the output. With
        with_kwargs: hook(module, args, kwargs, output); always_call: also when forward raised (output None)."""
        return self._add_hook("_forward_hooks", hook, prepend, with_kwargs, always_call)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) runs when the gradients with respect to the module's
        positional tensor inputs are computed; a non-None result replaces grad_input."""
        self._set_backward_hook_kind(True)
        return self._add_hook("_backward_hooks", hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated (torch): hook(module, grad_input, grad_output) on the grad_fn of the forward's first
        output tensor, grad_input being that node's input gradients (_legacy_backward_hooks.py)."""
        self._set_backward_hook_kind(False)
        return self._add_hook("_backward_hooks", hook)

    def _set_backward_hook_kind(self, full):
        if self._is_full_backward_hook is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) runs when the gradients of the module's outputs are computed; a
        non-None result replaces grad_output."""
        return self._add_hook("_backward_pre_hooks", hook, prepend)

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) runs before state_dict() collects this module's entries."""
        return self._add_hook("_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) runs after this module's entries are in."""
        return self._add_hook("_state_dict_hooks", hook)

    def _register_state_dict_hook(self, hook):
        """torch's older form: hook(module, state_dict, prefix, local_metadata) may return a new state_dict."""
        return self._add_hook("_state_dict_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs) runs before this module loads its entries (it may change state_dict)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) runs after load_state_dict loaded everything, before strict
        checks; it may edit incompatible_keys.missing_keys / unexpected_keys in place."""
        return self._add_hook("_load_state_dict_post_hooks", hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        runs before this module loads its entries and may rename them (torch's private hook, which
        parametrizations.weight_norm uses to read old `weight_g`/`weight_v` checkpoints)."""
        if with_module:
            hook = functools.partial(hook, self)
        handle = RemovableHandle(self._hook_dict("_load_state_dict_pre_hooks"))
        self._hook_dict("_load_state_dict_pre_hooks")[handle.id] = hook
        return handle

    # ---- registration ----
    def _check_name(self, kind, name, store):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        """Adds a Parameter (or None) under `name`."""
        self._check_name("parameter", name, self.__dict__.get("_parameters", {}))
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(kiln.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly; compute them from a leaf in forward() instead.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a Tensor (or None) under `name`; persistent buffers are part of state_dict()."""
        self._check_name("buffer", name, self.__dict__.get("_buffers", {}))
        if tensor is not None and not isinstance(tensor, _C.TensorBase):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(kiln Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Adds a child Module (or None) under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name("module", name, self.__dict__.get("_modules", {}))
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params, buffers, modules = d.get("_parameters"), d.get("_buffers"), d.get("_modules")

        def remove_from(*stores):
            for s in stores:
                if s is not None and name in s:
                    del s[name]

        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, buffers, modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(kiln.nn.Parameter or None expected)")
            self.register_parameter(name, None)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, params, buffers)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(kiln.nn.Module or None expected)")
            modules[name] = None
        elif isinstance(value, Buffer):
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            remove_from(d, params, modules)
            self.register_buffer(name, value, value.persistent)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, _C.TensorBase):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (kiln Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def get_submodule(self, target):
        """The submodule at dotted path `target` ('' is self)."""
        mod = self
        for item in target.split(".") if target else []:
            if not isinstance(mod._modules.get(item), Module):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target):
        """The parameter at dotted path `target` (module path, then the parameter's name)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._parameters:
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return mod._parameters[name]

    def get_buffer(self, target):
        """The buffer at dotted path `target` (module path, then the buffer's name)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return mod._buffers[name]

    # ---- iteration ----
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Yields (dotted name, module) for self and all descendants, each module once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        """torch's helper: get_members_fn(module) gives a module's own (name, value) pairs (torchmeta's
        MetaModule and other libraries pass a lambda over module._parameters.items()); kiln's own callers
        pass the name of the dict ("_parameters", "_buffers")."""
        if isinstance(get_members_fn, str):
            store = get_members_fn
            get_members_fn = lambda module: getattr(module, store).items()  # noqa: E731
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, value in get_members_fn(mod):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Yields (dotted name, Parameter), each parameter once (shared ones under their first name)."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and gradients ----
    def train(self, mode=True):
        """Sets the training flag of self and all descendants; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Resets the .grad of every parameter: to None (torch 2.x's default, as Optimizer.zero_grad),
        or (set_to_none=False) to zeros in place."""
        zero_grads(self.parameters(), set_to_none)

    def share_memory(self):
        """Moves every parameter and buffer into shared memory (Tensor.share_memory_), for hogwild
        training in several processes; returns self."""
        for t in list(self.parameters()) + list(self.buffers()):
            t.share_memory_()
        return self

    def apply(self, fn):
        """Calls fn on every child (recursively), then on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to_empty(self, *, device=None, recurse=True):
        """Gives every parameter and buffer uninitialised memory of its shape and dtype on `device`
        (a parameter keeps its identity, as torch's param.data swap; a buffer is a new tensor);
        returns self."""
        check_cpu(device)  # torch's CPU-only builds: cuda AssertionError, xla ... RuntimeError
        modules = self.modules() if recurse else [self]
        with no_grad():
            for m in modules:
                for name, p in m._parameters.items():
                    if p is not None:
                        p.data = _C.empty_like(p)
                for name, b in m._buffers.items():
                    if b is not None:
                        m._buffers[name] = _C.empty_like(b)
        return self

    def to(self, *args, **kwargs):
        """to(dtype), to(device), to(device, dtype), to(tensor) or keywords, as torch: converts
        floating-point parameters and buffers to the dtype (changed parameters become new
        Parameters). kiln runs on the CPU only, so any other device raises."""
        dtype = kwargs.pop("dtype", None)
        dev = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif a is not None:
                dev = a
        check_cpu(dev)  # torch's CPU-only builds: cuda AssertionError, xla ... RuntimeError
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
        if dtype is not None:
            self._apply_dtype(dtype)
        if memory_format is not None:
            self._apply_memory_format(memory_format)
        return self

    def _apply_memory_format(self, memory_format):
        """torch's Module.to(memory_format=): 4-D and 5-D parameters and buffers take the format; a
        parameter keeps its identity (its .data changes, as torch's default), so optimizers still hold it."""
        for m in self.children():
            m._apply_memory_format(memory_format)
        with no_grad():
            for p in self._parameters.values():
                if p is not None and p.dim() in (4, 5):
                    p.data = p.detach().to(memory_format=memory_format)
            for name, b in self._buffers.items():
                if b is not None and b.dim() in (4, 5):
                    self._buffers[name] = b.to(memory_format=memory_format)
        return self

    def _apply_dtype(self, dtype):
        for m in self.children():
            m._apply_dtype(dtype)
        with no_grad():
            for name, p in self._parameters.items():
                if is_lazy(p):  # a lazy module's parameter stays uninitialized, in the new dtype
                    self._parameters[name] = type(p)(p.requires_grad, None, dtype)
                elif p is not None and p.is_floating_point() and p.dtype != dtype:
                    self._parameters[name] = Parameter(p.detach().to(dtype), p.requires_grad)
            for name, b in self._buffers.items():
                if is_lazy(b):
                    self._buffers[name] = type(b)(b.requires_grad, None, dtype)
                elif b is not None and b.is_floating_point():
                    self._buffers[name] = b.to(dtype)
        return self

    def cpu(self):
        return self

    def type(self, dst_type):
        """Casts every parameter and buffer, integer ones too, to dst_type (a dtype or a type name such
        as 'torch.DoubleTensor'), as torch's Module.type; returns self."""
        for m in self.children():
            m.type(dst_type)
        with no_grad():
            for name, p in self._parameters.items():
                if p is not None:
                    self._parameters[name] = Parameter(p.detach().type(dst_type), p.requires_grad)
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = b.type(dst_type)
        return self

    def cuda(self, device=None):
        raise AssertionError("kiln not compiled with CUDA enabled")  # torch's CPU-only builds

    def float(self):
        return self._apply_dtype(_C.float32)

    def double(self):
        return self._apply_dtype(_C.float64)

    def half(self):
        return self._apply_dtype(_C.float16)

    def bfloat16(self):
        return self._apply_dtype(_C.bfloat16)

    # ---- state dict ----
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """OrderedDict of dotted name -> tensor (detached unless keep_vars) for parameters and persistent buffers."""
        if args:  # torch's deprecated positional form state_dict(destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        # torch's per-module metadata: {module prefix without the dot: {'version': the class's _version}}
        local_metadata = dict(version=_module_version(type(self)))
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self.__dict__.get("_state_dict_pre_hooks", {}).values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self.__dict__.get("_state_dict_hooks", {}).values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own entries (not its children's): parameters, persistent buffers, extra state.
        torch's hook for subclasses that save more or other entries (they call super() and add)."""
        for name, p in self._parameters.items():
            if p is not None:  # an uninitialized (lazy) one stays itself, as torch's LazyModuleMixin saves it
                destination[prefix + name] = p if keep_vars or is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:  # torch's "_extra_state" entry
            destination[prefix + _EXTRA_STATE_KEY] = self.get_extra_state()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Loads this module's own entries from state_dict (torch's signature: subclasses such as DETR's
        FrozenBatchNorm2d override it, edit state_dict, and call super() with the same seven arguments).
        local_metadata is the module's entry of state_dict._metadata ({"version": ...}, or {})."""
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in list(self._parameters.items()) + list(persistent.items()) if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            value = state_dict[key]
            if is_lazy(param) and is_lazy(value):  # both still uninitialized: nothing to copy
                continue
            if not isinstance(value, _C.TensorBase):
                error_msgs.append(f'While copying the parameter named "{key}", expected a kiln Tensor from '
                                  f"checkpoint but received {type(value)}")
            elif tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
            else:
                try:
                    with no_grad():
                        param.copy_(value)
                except Exception as e:  # noqa: BLE001  (reported with the others)
                    error_msgs.append(f'While copying the parameter named "{key}", an exception occurred: {e}.')
        extra_key = prefix + _EXTRA_STATE_KEY
        takes_extra = type(self).set_extra_state is not Module.set_extra_state
        if takes_extra:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            else:
                missing_keys.append(extra_key)
        for key in (state_dict if strict else ()):
            if key.startswith(prefix) and not (takes_extra and key == extra_key):
                head, *rest = key[len(prefix):].split(".", 1)
                if (rest and head not in self._modules) or (not rest and head not in local):
                    unexpected_keys.append(key)

    def get_extra_state(self):
        """The extra state a subclass saves in its state_dict under "_extra_state" (when it overrides this and
        set_extra_state); Module's own is never called, as in torch."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state):
        """Restores what get_extra_state returned (from load_state_dict)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def load_state_dict(self, state_dict, strict=True):
        """Copies values from state_dict into parameters and buffers (in place, under no_grad).

        Size mismatches always raise RuntimeError; with strict, missing or unexpected keys do too.
        Returns a namedtuple (missing_keys, unexpected_keys).
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # a copy: pre-hooks may rename its keys
        if metadata is not None:
            state_dict._metadata = metadata
        for prefix, module in self.named_modules(remove_duplicate=False):
            local_metadata = {} if metadata is None else metadata.get(prefix, {})
            dotted = prefix + "." if prefix else ""
            for hook in module.__dict__.get("_load_state_dict_pre_hooks", {}).values():
                hook(state_dict, dotted, local_metadata, strict, missing, unexpected, errors)
            # torch passes strict=True here whatever load_state_dict's strict: unexpected keys are always
            # collected, and raise only under strict
            module._load_from_state_dict(state_dict, dotted, local_metadata, True, missing, unexpected, errors)
        incompatible = _IncompatibleKeys(missing, unexpected)
        for _, module in self.named_modules(remove_duplicate=False):
            for hook in module.__dict__.get("_load_state_dict_post_hooks", {}).values():
                if hook(module, incompatible) is not None:
                    raise RuntimeError("load_state_dict post hooks should return None; modify incompatible_keys in "
                                       "place instead")
        if strict:
            if unexpected:
                errors.insert(0, f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. ")
            if missing:
                errors.insert(0, f"Missing key(s) in state_dict: {_quoted(missing)}. ")
        if errors:
            details = "\n\t".join(errors)
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t{details}")
        return incompatible

    # ---- repr ----
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """Extra text shown inside this module's repr(); subclasses override it."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): " + _addindent(repr(m), 2) for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


_EXTRA_STATE_KEY = "_extra_state"  # torch's _EXTRA_STATE_KEY_SUFFIX


def _module_version(cls):
    """A module class's state_dict version: its own or inherited `_version` (torch's Module has 1)."""
    for klass in cls.__mro__:
        if "_version" in klass.__dict__:
            return klass.__dict__["_version"]
    return 1
