"""A differential test of kiln against torch (the oracle): seeded random calls of the API both
share, compared for exceptions, dtypes, shapes, values, in-place/out= and aliasing behaviour and
float64 gradients. See tests/python/test_differential_torch.py."""
