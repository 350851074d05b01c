"""torch.__config__: show() and parallel_info(), the build and threading summaries that environment reports
(collect_env-style scripts, logs) print."""
import platform


def show():
    """A summary of how kiln was built and what it runs on."""
    from . import __version__
    return (f"kiln {__version__} (a libtorch-like tensor library)\n"
            f"  - Python {platform.python_version()} on {platform.machine()}\n"
            "  - CPU kernels: Highway vectors, SLEEF transcendentals, OpenBLAS matrix products, OpenMP threads\n"
            "  - No CUDA, no MKL, no MKL-DNN\n")


def parallel_info():
    """The thread settings, as torch's ATen/Parallel summary."""
    from . import get_num_interop_threads, get_num_threads
    return (f"kiln parallel info:\nat::get_num_threads() : {get_num_threads()}\n"
            f"at::get_num_interop_threads() : {get_num_interop_threads()}\n"
            "ATen parallel backend: OpenMP\n")
