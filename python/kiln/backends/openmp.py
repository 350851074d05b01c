"""kiln.backends.openmp: kiln's kernels are built with OpenMP (-fopenmp), as torch's CPU build is."""


def is_available():
    return True
