"""The Distribution base class: batch and event shapes, argument and sample validation (on unless
turned off, as torch's), the generic `expand`, and the defaults every family overrides."""
import warnings

import kiln

from . import constraints
from .utils import lazy_property


class Distribution:
    """A batch of probability distributions of shape `batch_shape`, each over values of shape
    `event_shape`."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    # attributes that keep their own, unbroadcast shape in `expand` (MultivariateNormal's scale_tril)
    _unbroadcast_attributes = ()

    @staticmethod
    def set_default_validate_args(value):
        """Turns argument validation on or off for every distribution built afterwards."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=kiln.Size(), event_shape=kiln.Size(), validate_args=None):
        self._batch_shape = kiln.Size(batch_shape)
        self._event_shape = kiln.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_arguments()

    def _check_arguments(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            warnings.warn(f"{type(self)} does not define `arg_constraints`. Please set `arg_constraints = {{}}` or "
                          "initialize the distribution with `validate_args=False` to turn off validation.")
            return
        for name, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None), lazy_property):
                continue  # the other parametrization was given; this one is derived on demand
            value = getattr(self, name)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                    f"distribution {self!r} to satisfy the constraint {constraint!r}, but found invalid "
                    f"values:\n{value}")

    # ---------------------------------------------------------------- shapes
    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=kiln.Size()):
        return kiln.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _get_checked_instance(self, cls, _instance=None):
        """The object a subclass's own `expand` fills in (a subclass with its own __init__ needs one)."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def expand(self, batch_shape, _instance=None):
        """The same distribution repeated over a larger batch_shape (views of the parameters, no copies).
        Tensors whose leading dimensions are the batch shape grow in front; inner distributions are
        expanded alike."""
        batch_shape = kiln.Size(batch_shape)
        old = tuple(self._batch_shape)
        new = object.__new__(type(self)) if _instance is None else _instance
        for key, value in self.__dict__.items():
            if key not in self._unbroadcast_attributes:
                if isinstance(value, kiln.Tensor) and tuple(value.shape[:len(old)]) == old:
                    value = value.expand(tuple(batch_shape) + tuple(value.shape[len(old):]))
                elif isinstance(value, Distribution) and tuple(value.batch_shape[:len(old)]) == old:
                    value = value.expand(tuple(batch_shape) + tuple(value.batch_shape[len(old):]))
            new.__dict__[key] = value
        new._batch_shape = batch_shape
        return new

    # ---------------------------------------------------------------- what families define
    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=kiln.Size()):
        with kiln.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=kiln.Size()):
        raise NotImplementedError

    def sample_n(self, n):
        return self.sample(kiln.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return kiln.exp(self.entropy())

    # ---------------------------------------------------------------- validation of values
    def _validate_sample(self, value):
        if not isinstance(value, kiln.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {tuple(value.shape)} vs "
                             f"{tuple(self._event_shape)}.")
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(tuple(value.shape)), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {tuple(value.shape)} "
                                 f"vs {expected}.")
        support = self.support
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the "
                f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self):
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        shown = ", ".join(f"{k}: {self.__dict__[k] if self.__dict__[k].numel() == 1 else self.__dict__[k].size()}"
                          for k in names)
        return f"{type(self).__name__}({shown})"
