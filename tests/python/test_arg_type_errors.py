"""A non-tensor where a function wants a tensor: torch's bindings raise TypeError, and so must kiln's
functions written in Python (kiln/_arg_errors.py), not an AttributeError from deep inside."""
import pytest
import torch

import kiln

CALLS = {
    "F.relu(7)": lambda L: L.nn.functional.relu(7),
    "F.linear(x, None)": lambda L: L.nn.functional.linear(L.ones(2), None),
    "F.cross_entropy(x, [1])": lambda L: L.nn.functional.cross_entropy(L.ones(1, 3), [1]),
    "F.nll_loss(3, x)": lambda L: L.nn.functional.nll_loss(3, L.zeros(2, dtype=L.int64)),
    "F.embedding(x, None)": lambda L: L.nn.functional.embedding(L.zeros(2, dtype=L.int64), None),
    "F.one_hot(1.5)": lambda L: L.nn.functional.one_hot(1.5),
    "F.cosine_similarity(x, 2)": lambda L: L.nn.functional.cosine_similarity(L.ones(2, 3), 2),
    "kiln.square('bogus')": lambda L: L.square("bogus"),
    "kiln.greater_equal(1, x)": lambda L: L.greater_equal(1, L.ones(2)),
    "kiln.numel(1)": lambda L: L.numel(1),
    "kiln.is_floating_point(1.5)": lambda L: L.is_floating_point(1.5),
    "kiln.tensordot(1, x)": lambda L: L.tensordot(1, L.ones(2)),
    "kiln.linalg.matrix_power(1, 2)": lambda L: L.linalg.matrix_power(1, 2),
    "kiln.linalg.vector_norm([1.0])": lambda L: L.linalg.vector_norm([1.0]),
    "x.view_as(3)": lambda L: L.ones(2).view_as(3),
    "x.expand_as(None)": lambda L: L.ones(2).expand_as(None),
    "x.reshape_as(1.5)": lambda L: L.ones(2).reshape_as(1.5),
    "x.is_same_size(1)": lambda L: L.ones(2).is_same_size(1),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_raises_torchs_type_error(name):
    with pytest.raises(TypeError):
        CALLS[name](torch)  # the reference: torch raises TypeError here
    with pytest.raises(TypeError) as e:
        CALLS[name](kiln)
    assert "must be Tensor" in str(e.value) or "invalid combination of arguments" in str(e.value) or \
        "argument" in str(e.value)


def test_message_names_the_function_and_the_argument():
    with pytest.raises(TypeError, match=r"^view_as\(\): argument 'other' \(position 1\) must be Tensor, not int$"):
        kiln.ones(2).view_as(3)
    with pytest.raises(TypeError, match=r"^linear\(\): argument 'weight' \(position 2\) must be Tensor, not NoneType$"):
        kiln.nn.functional.linear(kiln.ones(2), None)


def test_a_missing_tensor_attribute_stays_an_attribute_error():
    # only a wrong-typed argument becomes TypeError: a tensor lacking an attribute is not rewritten
    with pytest.raises(AttributeError):
        kiln.ones(2).no_such_method()
