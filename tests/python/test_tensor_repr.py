"""repr(tensor) and kiln.set_printoptions: the text must be what torch 1.13 prints (with kiln. for torch.).

The expected strings were copied from torch's output; torch is not imported here.
"""
import pytest

import kiln


@pytest.fixture(autouse=True)
def default_print_options():
    kiln.set_printoptions(profile="default")
    yield
    kiln.set_printoptions(profile="default")


@pytest.mark.parametrize("make,expected", [
    # basics: 0-dim, negatives, bools
    (lambda: kiln.tensor([1., 2., 3.]),
     'tensor([1., 2., 3.])'),
    (lambda: kiln.tensor([1, 2]),
     'tensor([1, 2])'),
    (lambda: kiln.tensor([-1, 20, -300]),
     'tensor([  -1,   20, -300])'),
    (lambda: kiln.tensor([True, False]),
     'tensor([ True, False])'),
    (lambda: kiln.tensor([-1., 2.5]),
     'tensor([-1.0000,  2.5000])'),
    (lambda: kiln.tensor([1 / 3, -2 / 3]),
     'tensor([ 0.3333, -0.6667])'),
    (lambda: kiln.tensor(3.5),
     'tensor(3.5000)'),
    (lambda: kiln.tensor(3),
     'tensor(3)'),
    (lambda: kiln.tensor(-2.),
     'tensor(-2.)'),
    (lambda: kiln.tensor(True),
     'tensor(True)'),
    (lambda: kiln.tensor(-0.),
     'tensor(-0.)'),
    (lambda: kiln.tensor(1e-7),
     'tensor(1.0000e-07)'),
    # rows longer than linewidth 80 wrap, aligned under the first element
    (lambda: kiln.arange(10.) / 3,
     ('tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n'
      '        3.0000])')),
    (lambda: kiln.arange(30),
     ('tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n'
      '        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])')),
    (lambda: kiln.arange(40) > 20,
     ('tensor([False, False, False, False, False, False, False, False, False, False,\n'
      '        False, False, False, False, False, False, False, False, False, False,\n'
      '        False,  True,  True,  True,  True,  True,  True,  True,  True,  True,\n'
      '         True,  True,  True,  True,  True,  True,  True,  True,  True,  True])')),
    (lambda: (kiln.arange(20.) / 3).reshape(2, 10),
     ('tensor([[0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n'
      '         3.0000],\n'
      '        [3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667, 6.0000,\n'
      '         6.3333]])')),
    (lambda: kiln.arange(12.).reshape(3, 4).t() / 3,
     ('tensor([[0.0000, 1.3333, 2.6667],\n'
      '        [0.3333, 1.6667, 3.0000],\n'
      '        [0.6667, 2.0000, 3.3333],\n'
      '        [1.0000, 2.3333, 3.6667]])')),
    # more than 1000 elements: 3 at each end of each dim, "  ..." between
    (lambda: kiln.arange(2000),
     'tensor([   0,    1,    2,  ..., 1997, 1998, 1999])'),
    (lambda: kiln.arange(2000.) / 4,
     ('tensor([0.0000e+00, 2.5000e-01, 5.0000e-01,  ..., 4.9925e+02, 4.9950e+02,\n'
      '        4.9975e+02])')),
    (lambda: kiln.arange(2000) % 2 == 0,
     'tensor([ True, False,  True,  ..., False,  True, False])'),
    (lambda: kiln.arange(3000.).reshape(60, 50) / 7,
     ('tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 6.7143e+00, 6.8571e+00,\n'
      '         7.0000e+00],\n'
      '        [7.1429e+00, 7.2857e+00, 7.4286e+00,  ..., 1.3857e+01, 1.4000e+01,\n'
      '         1.4143e+01],\n'
      '        [1.4286e+01, 1.4429e+01, 1.4571e+01,  ..., 2.1000e+01, 2.1143e+01,\n'
      '         2.1286e+01],\n'
      '        ...,\n'
      '        [4.0714e+02, 4.0729e+02, 4.0743e+02,  ..., 4.1386e+02, 4.1400e+02,\n'
      '         4.1414e+02],\n'
      '        [4.1429e+02, 4.1443e+02, 4.1457e+02,  ..., 4.2100e+02, 4.2114e+02,\n'
      '         4.2129e+02],\n'
      '        [4.2143e+02, 4.2157e+02, 4.2171e+02,  ..., 4.2814e+02, 4.2829e+02,\n'
      '         4.2843e+02]])')),
    (lambda: kiln.arange(2000).reshape(10, 10, 20),
     ('tensor([[[   0,    1,    2,  ...,   17,   18,   19],\n'
      '         [  20,   21,   22,  ...,   37,   38,   39],\n'
      '         [  40,   41,   42,  ...,   57,   58,   59],\n'
      '         ...,\n'
      '         [ 140,  141,  142,  ...,  157,  158,  159],\n'
      '         [ 160,  161,  162,  ...,  177,  178,  179],\n'
      '         [ 180,  181,  182,  ...,  197,  198,  199]],\n'
      '\n'
      '        [[ 200,  201,  202,  ...,  217,  218,  219],\n'
      '         [ 220,  221,  222,  ...,  237,  238,  239],\n'
      '         [ 240,  241,  242,  ...,  257,  258,  259],\n'
      '         ...,\n'
      '         [ 340,  341,  342,  ...,  357,  358,  359],\n'
      '         [ 360,  361,  362,  ...,  377,  378,  379],\n'
      '         [ 380,  381,  382,  ...,  397,  398,  399]],\n'
      '\n'
      '        [[ 400,  401,  402,  ...,  417,  418,  419],\n'
      '         [ 420,  421,  422,  ...,  437,  438,  439],\n'
      '         [ 440,  441,  442,  ...,  457,  458,  459],\n'
      '         ...,\n'
      '         [ 540,  541,  542,  ...,  557,  558,  559],\n'
      '         [ 560,  561,  562,  ...,  577,  578,  579],\n'
      '         [ 580,  581,  582,  ...,  597,  598,  599]],\n'
      '\n'
      '        ...,\n'
      '\n'
      '        [[1400, 1401, 1402,  ..., 1417, 1418, 1419],\n'
      '         [1420, 1421, 1422,  ..., 1437, 1438, 1439],\n'
      '         [1440, 1441, 1442,  ..., 1457, 1458, 1459],\n'
      '         ...,\n'
      '         [1540, 1541, 1542,  ..., 1557, 1558, 1559],\n'
      '         [1560, 1561, 1562,  ..., 1577, 1578, 1579],\n'
      '         [1580, 1581, 1582,  ..., 1597, 1598, 1599]],\n'
      '\n'
      '        [[1600, 1601, 1602,  ..., 1617, 1618, 1619],\n'
      '         [1620, 1621, 1622,  ..., 1637, 1638, 1639],\n'
      '         [1640, 1641, 1642,  ..., 1657, 1658, 1659],\n'
      '         ...,\n'
      '         [1740, 1741, 1742,  ..., 1757, 1758, 1759],\n'
      '         [1760, 1761, 1762,  ..., 1777, 1778, 1779],\n'
      '         [1780, 1781, 1782,  ..., 1797, 1798, 1799]],\n'
      '\n'
      '        [[1800, 1801, 1802,  ..., 1817, 1818, 1819],\n'
      '         [1820, 1821, 1822,  ..., 1837, 1838, 1839],\n'
      '         [1840, 1841, 1842,  ..., 1857, 1858, 1859],\n'
      '         ...,\n'
      '         [1940, 1941, 1942,  ..., 1957, 1958, 1959],\n'
      '         [1960, 1961, 1962,  ..., 1977, 1978, 1979],\n'
      '         [1980, 1981, 1982,  ..., 1997, 1998, 1999]]])')),
    (lambda: kiln.arange(1001, dtype=kiln.int32),
     'tensor([   0,    1,    2,  ...,  998,  999, 1000], dtype=kiln.int32)'),
    # scientific notation: whole-number floats, spread > 1000 or above 1e8
    (lambda: kiln.tensor([2000., 1.]),
     'tensor([2.0000e+03, 1.0000e+00])'),
    (lambda: kiln.tensor([1000., 1.]),
     'tensor([1000.,    1.])'),
    (lambda: kiln.tensor([1e8, 2.]),
     'tensor([1.0000e+08, 2.0000e+00])'),
    (lambda: kiln.tensor([1e8]),
     'tensor([100000000.])'),
    (lambda: kiln.tensor([1e9]),
     'tensor([1.0000e+09])'),
    (lambda: kiln.tensor([-5., 10000000.]),
     'tensor([-5.0000e+00,  1.0000e+07])'),
    # scientific notation: fractions, also when the smallest is below 1e-4
    (lambda: kiln.tensor([1e-5, 1.]),
     'tensor([1.0000e-05, 1.0000e+00])'),
    (lambda: kiln.tensor([1e-4, 1.5]),
     'tensor([1.0000e-04, 1.5000e+00])'),
    (lambda: kiln.tensor([1.5e-10, 3e10]),
     'tensor([1.5000e-10, 3.0000e+10])'),
    (lambda: kiln.tensor([0.001, 123.4]),
     'tensor([1.0000e-03, 1.2340e+02])'),
    (lambda: kiln.tensor([0.001, 1234.5]),
     'tensor([1.0000e-03, 1.2345e+03])'),
    (lambda: kiln.tensor([123456.789]),
     'tensor([123456.7891])'),
    (lambda: kiln.tensor([1.5e9, 1.5]),
     'tensor([1.5000e+09, 1.5000e+00])'),
    # nan, inf and zeros neither widen the columns nor choose the notation
    (lambda: kiln.tensor([float('nan'), 1., 2.]),
     'tensor([nan, 1., 2.])'),
    (lambda: kiln.tensor([-0., 1.]),
     'tensor([-0., 1.])'),
    (lambda: kiln.tensor([float('inf'), 1.]),
     'tensor([inf, 1.])'),
    (lambda: kiln.tensor([-0., 1.5]),
     'tensor([-0.0000, 1.5000])'),
    (lambda: kiln.tensor([float('nan')]),
     'tensor([nan])'),
    (lambda: kiln.tensor([float('inf'), -float('inf'), float('nan')]),
     'tensor([inf, -inf, nan])'),
    (lambda: kiln.tensor([0., 0.]),
     'tensor([0., 0.])'),
    (lambda: kiln.tensor([float('nan'), 1.5e-7]),
     'tensor([       nan, 1.5000e-07])'),
    (lambda: kiln.tensor([[float('nan'), -1.25], [1e3, 0.]]),
     ('tensor([[      nan,   -1.2500],\n'
      '        [1000.0000,    0.0000]])')),
    (lambda: kiln.zeros(2, 3),
     ('tensor([[0., 0., 0.],\n'
      '        [0., 0., 0.]])')),
    # dtype suffix: shown except for the default float dtype, int64 and bool
    (lambda: kiln.tensor([1., 2.], dtype=kiln.float64),
     'tensor([1., 2.], dtype=kiln.float64)'),
    (lambda: kiln.tensor([1, 2], dtype=kiln.int32),
     'tensor([1, 2], dtype=kiln.int32)'),
    (lambda: kiln.tensor([1, 2], dtype=kiln.int64),
     'tensor([1, 2])'),
    (lambda: kiln.tensor(7, dtype=kiln.int32),
     'tensor(7, dtype=kiln.int32)'),
    (lambda: kiln.tensor([[1, 10 ** 10], [-3, 4]]),
     ('tensor([[          1, 10000000000],\n'
      '        [         -3,           4]])')),
    # several dims: one blank line more between blocks per extra dim
    (lambda: kiln.tensor([[1., 2.], [3., 4.]]),
     ('tensor([[1., 2.],\n'
      '        [3., 4.]])')),
    (lambda: kiln.tensor([[1, 22], [333, 4]]),
     ('tensor([[  1,  22],\n'
      '        [333,   4]])')),
    (lambda: kiln.arange(8).reshape(2, 2, 2),
     ('tensor([[[0, 1],\n'
      '         [2, 3]],\n'
      '\n'
      '        [[4, 5],\n'
      '         [6, 7]]])')),
    (lambda: kiln.arange(16.).reshape(2, 2, 2, 2) / 2,
     ('tensor([[[[0.0000, 0.5000],\n'
      '          [1.0000, 1.5000]],\n'
      '\n'
      '         [[2.0000, 2.5000],\n'
      '          [3.0000, 3.5000]]],\n'
      '\n'
      '\n'
      '        [[[4.0000, 4.5000],\n'
      '          [5.0000, 5.5000]],\n'
      '\n'
      '         [[6.0000, 6.5000],\n'
      '          [7.0000, 7.5000]]]])')),
    (lambda: kiln.tensor([[True], [False]]),
     ('tensor([[ True],\n'
      '        [False]])')),
    # empty tensors: dtype shown unless the default; size unless (0,)
    (lambda: kiln.zeros(0),
     'tensor([])'),
    (lambda: kiln.zeros(0, dtype=kiln.int64),
     'tensor([], dtype=kiln.int64)'),
    (lambda: kiln.zeros(0, dtype=kiln.bool),
     'tensor([], dtype=kiln.bool)'),
    (lambda: kiln.zeros(0, dtype=kiln.float64),
     'tensor([], dtype=kiln.float64)'),
    (lambda: kiln.zeros(0, 3),
     'tensor([], size=(0, 3))'),
    (lambda: kiln.zeros(2, 0, dtype=kiln.int32),
     'tensor([], size=(2, 0), dtype=kiln.int32)'),
    (lambda: kiln.zeros(0, 1, 2, dtype=kiln.int64),
     'tensor([], size=(0, 1, 2), dtype=kiln.int64)'),
    # autograd suffixes, moved to a new line past linewidth
    (lambda: kiln.tensor([1., 2.], requires_grad=True),
     'tensor([1., 2.], requires_grad=True)'),
    (lambda: kiln.tensor([1., 2.], requires_grad=True) * 2,
     'tensor([2., 4.], grad_fn=<MulBackward0>)'),
    (lambda: kiln.tensor([1., 2.], dtype=kiln.float64, requires_grad=True) + 1,
     'tensor([2., 3.], dtype=kiln.float64, grad_fn=<AddBackward0>)'),
    (lambda: kiln.tensor([1.5, 2.], requires_grad=True).sum(),
     'tensor(3.5000, grad_fn=<SumBackward0>)'),
    (lambda: kiln.zeros(0, 3, requires_grad=True),
     'tensor([], size=(0, 3), requires_grad=True)'),
    (lambda: kiln.arange(30.).requires_grad_() * 2,
     ('tensor([ 0.,  2.,  4.,  6.,  8., 10., 12., 14., 16., 18., 20., 22., 24., 26.,\n'
      '        28., 30., 32., 34., 36., 38., 40., 42., 44., 46., 48., 50., 52., 54.,\n'
      '        56., 58.], grad_fn=<MulBackward0>)')),
    (lambda: kiln.tensor([1.5, 2.5, 3.5], dtype=kiln.float64, requires_grad=True) * 2,
     'tensor([3., 5., 7.], dtype=kiln.float64, grad_fn=<MulBackward0>)'),
    (lambda: kiln.tensor([11.5, 2.5, 3.5], dtype=kiln.float64, requires_grad=True) * 2,
     'tensor([23.,  5.,  7.], dtype=kiln.float64, grad_fn=<MulBackward0>)'),
    # torch breaks here because "dtype=torch.float64" is one letter longer; kiln breaks at the same place
    (lambda: kiln.tensor([1.2345, -1.5, 1.25], dtype=kiln.float64, requires_grad=True) * 2,
     ('tensor([ 2.4690, -3.0000,  2.5000], dtype=kiln.float64,\n'
      '       grad_fn=<MulBackward0>)')),
])
def test_repr_matches_torch(make, expected):
    t = make()
    assert repr(t) == expected
    assert str(t) == expected


def test_threshold_is_strict():
    assert "..." not in repr(kiln.arange(1000))
    assert repr(kiln.arange(1001)) == "tensor([   0,    1,    2,  ...,  998,  999, 1000])"


def test_non_default_float_dtype():
    kiln.set_default_dtype(kiln.float64)
    try:
        assert repr(kiln.tensor([1.5, 2.])) == "tensor([1.5000, 2.0000])"
        assert repr(kiln.tensor([1.5, 2.], dtype=kiln.float32)) == "tensor([1.5000, 2.0000], dtype=kiln.float32)"
        assert repr(kiln.zeros(0)) == "tensor([])"
        assert repr(kiln.zeros(0, dtype=kiln.float32)) == "tensor([], dtype=kiln.float32)"
    finally:
        kiln.set_default_dtype(kiln.float32)


def test_parameter_prefix():
    p = kiln.nn.Parameter(kiln.arange(20.) / 3)
    assert repr(p) == ("Parameter containing:\n"
                       "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
                       "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
                       "        6.0000, 6.3333], requires_grad=True)")


# ---------------------------------------------------------------- set_printoptions

def test_set_printoptions_is_exported():
    assert "set_printoptions" in kiln.__all__


@pytest.mark.parametrize("options,make,expected", [
    (dict(precision=2), lambda: kiln.tensor([1.12345, 2.5]),
     'tensor([1.12, 2.50])'),
    (dict(precision=0), lambda: kiln.tensor([1.5, 2.25]),
     'tensor([2, 2])'),
    (dict(precision=6), lambda: kiln.tensor([1e-5, 1.]),
     'tensor([1.000000e-05, 1.000000e+00])'),
    (dict(threshold=5), lambda: kiln.arange(10),
     'tensor([0, 1, 2,  ..., 7, 8, 9])'),
    (dict(threshold=5, edgeitems=1), lambda: kiln.arange(12.).reshape(3, 4),
     ('tensor([[ 0.,  ...,  3.],\n'
      '        ...,\n'
      '        [ 8.,  ..., 11.]])')),
    (dict(linewidth=40), lambda: kiln.arange(10.) / 3,
     ('tensor([0.0000, 0.3333, 0.6667, 1.0000,\n'
      '        1.3333, 1.6667, 2.0000, 2.3333,\n'
      '        2.6667, 3.0000])')),
    (dict(linewidth=120), lambda: kiln.arange(10.) / 3,
     'tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667, 3.0000])'),
    (dict(profile='short'), lambda: kiln.arange(2000.) / 3,
     'tensor([0.00e+00, 3.33e-01,  ..., 6.66e+02, 6.66e+02])'),
    (dict(sci_mode=True), lambda: kiln.tensor([1.5, 2.]),
     'tensor([1.5000e+00, 2.0000e+00])'),
    (dict(sci_mode=False), lambda: kiln.tensor([2000., 1.]),
     'tensor([     2000.,         1.])'),
    (dict(sci_mode=False), lambda: kiln.tensor([1e-5, 1.]),
     'tensor([    0.0000,     1.0000])'),
    (dict(sci_mode=True), lambda: kiln.zeros(2),
     'tensor([0., 0.])'),
    (dict(profile='short', precision=3), lambda: kiln.tensor([1 / 3]),
     'tensor([0.333])'),
    (dict(linewidth=60), lambda: kiln.tensor([1.5, 2.5, 3.5], dtype=kiln.float64, requires_grad=True) * 2,
     ('tensor([3., 5., 7.], dtype=kiln.float64,\n'
      '       grad_fn=<MulBackward0>)')),
])
def test_set_printoptions(options, make, expected):
    kiln.set_printoptions(**options)
    assert repr(make()) == expected


def test_profile_full_never_summarizes_and_default_restores():
    kiln.set_printoptions(profile="full")
    text = repr(kiln.arange(1005))
    assert "..." not in text and text.endswith(" 1004])") and len(text.splitlines()) == 84
    kiln.set_printoptions(profile="default")
    assert repr(kiln.arange(1005)) == "tensor([   0,    1,    2,  ..., 1002, 1003, 1004])"
    assert repr(kiln.tensor([1 / 3])) == "tensor([0.3333])"


def test_explicit_option_overrides_profile():
    kiln.set_printoptions(profile="short", edgeitems=1, threshold=3)
    assert repr(kiln.arange(10.) / 7) == "tensor([0.00,  ..., 1.29])"


def test_omitted_options_are_kept_but_sci_mode_resets():
    kiln.set_printoptions(precision=2, sci_mode=True)
    assert repr(kiln.tensor([1.5])) == "tensor([1.50e+00])"
    kiln.set_printoptions(linewidth=100)  # precision stays 2; sci_mode goes back to automatic, as torch
    assert repr(kiln.tensor([1.5])) == "tensor([1.50])"
