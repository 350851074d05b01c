"""kiln.backends.mkl: kiln uses OpenBLAS, not Intel MKL (torch answers True only when built with MKL)."""


def is_available():
    return False
