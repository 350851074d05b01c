"""kiln.hub: torch.hub's cache and loaders. Model code copied from torchvision and many repos does
`from torch.hub import load_state_dict_from_url` (or torch.utils.model_zoo.load_url) and fetches pretrained
weights into the hub directory ($TORCH_HOME/hub, else $XDG_CACHE_HOME/torch/hub, else ~/.cache/torch/hub) the
first time, reading the cached file afterwards; a file already in the cache is read without any network access.
load / list / help run a hubconf.py: from a local directory (source='local'); a GitHub repository is fetched
only into the same cache as torch does, so a repository already downloaded there works too."""
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import warnings
from urllib.parse import urlparse
from urllib.request import Request, urlopen

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
READ_DATA_CHUNK = 8192

_hub_dir = None


def _torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(
        os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir():
    """The hub cache directory: set_dir's, else $TORCH_HOME/hub."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead")
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_torch_home(), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads url to dst through a temporary file in dst's directory; with hash_prefix, the file's
    SHA-256 must start with it (RuntimeError otherwise, and dst is not written)."""
    dst = os.path.expanduser(dst)
    req = Request(url, headers={"User-Agent": "torch.hub"})
    with urlopen(req) as u:
        dst_dir = os.path.dirname(os.path.abspath(dst))
        f = tempfile.NamedTemporaryFile(delete=False, dir=dst_dir)
        try:
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            while True:
                buffer = u.read(READ_DATA_CHUNK)
                if not buffer:
                    break
                f.write(buffer)
                if sha256 is not None:
                    sha256.update(buffer)
            f.close()
            if sha256 is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
            shutil.move(f.name, dst)
        finally:
            f.close()
            if os.path.exists(f.name):
                os.remove(f.name)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """The object saved at url (kiln.load of the cached copy in <hub dir>/checkpoints, downloaded first if
    missing). With check_hash, the file name's -<hex>. part must prefix the file's SHA-256."""
    from . import serialization
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    return serialization.load(cached_file, map_location=map_location, weights_only=weights_only)


def _repo_dir(repo_or_dir, source, force_reload):
    if source == "local":
        return repo_or_dir
    if source != "github":
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    owner_name, _, ref = repo_or_dir.partition(":")
    owner, name = owner_name.split("/")
    repo_dir = os.path.join(get_dir(), "_".join([owner, name, (ref or "main").replace("/", "_")]))
    if force_reload or not os.path.exists(repo_dir):
        raise RuntimeError(f"kiln.hub cannot fetch {repo_or_dir} from GitHub; place the repository in "
                           f"{repo_dir} or use source='local'")
    return repo_dir


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    sys.path.insert(0, repo_dir)
    try:
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    missing = [pkg for pkg in getattr(module, VAR_DEPENDENCY, []) if importlib.util.find_spec(pkg) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entrypoint(hub_module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    func = getattr(hub_module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def list(github, force_reload=False, skip_validation=False, trust_repo=None, source="github"):
    """The entrypoints (public callables) of the repository's hubconf.py."""
    module = _import_hubconf(_repo_dir(github, source, force_reload))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None, source="github"):
    module = _import_hubconf(_repo_dir(github, source, force_reload))
    return _entrypoint(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """hubconf.py's entrypoint `model` called with args / kwargs."""
    source = source.lower()
    module = _import_hubconf(_repo_dir(repo_or_dir, source, force_reload))
    return _entrypoint(module, model)(*args, **kwargs)
