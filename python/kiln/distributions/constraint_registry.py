"""biject_to(c) and transform_to(c): a transform from unconstrained reals onto the set c, for
optimizing constrained parameters. biject_to gives a bijection (StickBreaking for the simplex);
transform_to may be any onto map (Softmax for the simplex)."""
from . import constraints, transforms


class ConstraintRegistry:
    """Factories keyed by constraint class (or by a constraint instance for a single object)."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        if factory is None:
            return lambda f: self.register(constraint, f)
        key = constraint if isinstance(constraint, type) else type(constraint)
        self._registry[key] = factory
        return factory

    def __call__(self, constraint):
        for cls in type(constraint).__mro__:
            if cls in self._registry:
                return self._registry[cls](constraint)
        raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints")


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(c):
    return transforms.identity_transform


def _greater_than(c):
    if isinstance(c.lower_bound, (int, float)) and c.lower_bound == 0:
        return transforms.ExpTransform()
    return transforms.ComposeTransform([transforms.ExpTransform(), transforms.AffineTransform(c.lower_bound, 1)])


def _less_than(c):
    return transforms.ComposeTransform([transforms.ExpTransform(), transforms.AffineTransform(c.upper_bound, -1)])


def _interval(c):
    lo, hi = c.lower_bound, c.upper_bound
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and lo == 0 and hi == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(lo, hi - lo)])


for registry in (biject_to, transform_to):
    registry.register(constraints._Real, _real)
    registry.register(constraints._GreaterThan, _greater_than)
    registry.register(constraints._LessThan, _less_than)
    registry.register(constraints._Interval, _interval)
    registry.register(constraints._CorrCholesky, lambda c: transforms.CorrCholeskyTransform())
    registry.register(constraints._Cat, lambda c, r=registry: transforms.CatTransform(
        [r(x) for x in c.cseq], c.dim, c.lengths))
    registry.register(constraints._Stack, lambda c, r=registry: transforms.StackTransform(
        [r(x) for x in c.cseq], c.dim))
    registry.register(constraints._Independent, lambda c, r=registry: transforms.IndependentTransform(
        r(c.base_constraint), c.reinterpreted_batch_ndims))

biject_to.register(constraints._Simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda c: transforms.SoftmaxTransform())
transform_to.register(constraints._LowerCholesky, lambda c: transforms.LowerCholeskyTransform())
