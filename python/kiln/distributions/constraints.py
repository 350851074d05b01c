"""The few constraints the distributions here check (torch.distributions.constraints)."""


class Constraint:
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Real(Constraint):
    def check(self, value):
        return value == value  # not NaN


class _Positive(Constraint):
    def check(self, value):
        return value > 0


class _UnitInterval(Constraint):
    def check(self, value):
        return (value >= 0) & (value <= 1)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        import kiln
        return kiln.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _IndependentReal(Constraint):
    event_dim = 1

    def check(self, value):
        return (value == value).all(-1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        import kiln
        return kiln.full(size=value.shape[:-2], fill_value=(value.shape[-2] == value.shape[-1]), dtype=kiln.bool)


class _Symmetric(_Square):
    def check(self, value):
        import kiln
        square_check = super().check(value)
        if not square_check.all():
            return square_check
        return kiln.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        import kiln
        sym_check = super().check(value)
        if not sym_check.all():
            return sym_check
        return kiln.linalg.cholesky_ex(value).info.eq(0)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        value_tril = value.tril()
        lower_triangular = (value_tril == value).view(value.shape[:-2] + (-1,)).min(-1)[0]
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1)[0]
        return lower_triangular & positive_diagonal


real = _Real()
positive = _Positive()
unit_interval = _UnitInterval()
boolean = _Boolean()
simplex = _Simplex()
real_vector = _IndependentReal()
square = _Square()
symmetric = _Symmetric()
positive_definite = _PositiveDefinite()
lower_cholesky = _LowerCholesky()
integer_interval = _IntegerInterval


class _Dependent(Constraint):
    """A constraint that depends on other parameters (Uniform's low/high): not checked on its own."""

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


dependent = _Dependent()
interval = _Interval
