"""Declared parameter constraints of mechanisms, checked in one place with one message format.

Every mechanism class lists, in ``_parameter_constraints``, each constructor parameter with
the values it accepts (a list: the value must satisfy one of them), in the manner of
scikit-learn's ``_parameter_constraints``::

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, inf, closed="right")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "pca_source": [Options("same-data", "laplace")],
        "domain": [None, Instance(EncodedDomain)],
    }

:func:`validate_parameters` raises :class:`~privrelease.errors.ParameterError` with the message
``The 'epsilon' parameter of GaussPCA must be a float in (0, inf]. Got -1.`` These checks are
static (type and range); checks that depend on the data (``n_components <= p``) or on several
parameters together stay in ``fit``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from pathlib import Path

import numpy as np

from ..errors import ParameterError
from ..noise import RandomSource
from ..schema.encoding import EncodedDomain

__all__ = ["Interval", "Options", "Instance", "ArrayLike", "RNG", "BOOL", "validate_parameters", "describe"]


class Interval:
    """A number of type ``Integral`` or ``Real`` in an interval; ``None`` bounds are infinite."""

    def __init__(self, kind, low, high, *, closed: str):
        if kind not in (Integral, Real) or closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"bad interval: {kind!r}, closed={closed!r}")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def accepts(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return False
        if self.kind is Integral and not isinstance(value, (int, np.integer)):
            return False
        if self.kind is Real and not isinstance(value, (int, float, np.integer, np.floating)):
            return False
        v = float(value)
        if math.isnan(v):
            return False
        lo = -math.inf if self.low is None else self.low
        hi = math.inf if self.high is None else self.high
        left_ok = v >= lo if self.closed in ("left", "both") else v > lo
        right_ok = v <= hi if self.closed in ("right", "both") else v < hi
        return left_ok and right_ok

    def __str__(self) -> str:
        lo = "-inf" if self.low is None else _num(self.low)
        hi = "inf" if self.high is None else _num(self.high)
        left = "[" if self.closed in ("left", "both") else "("
        right = "]" if self.closed in ("right", "both") else ")"
        return f"{'an int' if self.kind is Integral else 'a float'} in {left}{lo}, {hi}{right}"


class Options:
    """One of a fixed set of values (strings, usually)."""

    def __init__(self, *values):
        self.values = values

    def accepts(self, value) -> bool:
        return isinstance(value, (str, bool, int, float)) and any(
            value == v and type(value) is type(v) for v in self.values)

    def __str__(self) -> str:
        return f"one of {{{', '.join(repr(v) for v in self.values)}}}"


class Instance:
    """An instance of one of ``types``; ``what`` names it in the message."""

    def __init__(self, *types, what: str | None = None):
        self.types = types
        self.what = what or " or ".join(f"an instance of '{t.__name__}'" for t in types)

    def accepts(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)) and not any(t in (bool, np.bool_) for t in self.types):
            return False
        return isinstance(value, self.types)

    def __str__(self) -> str:
        return self.what


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


#: Arrays given as parameters (public data, bases): numpy arrays, nested lists/tuples, data frames.
ArrayLike = Instance(np.ndarray, list, tuple, what="an array-like")
try:  # a pandas DataFrame is array-like too
    import pandas as _pd

    ArrayLike = Instance(np.ndarray, list, tuple, _pd.DataFrame, what="an array-like")
except ImportError:  # pragma: no cover - pandas is a dependency
    pass
#: The randomness of a mechanism: None (secure noise), an int seed, a Generator or a noise source.
RNG = Instance(int, np.integer, np.random.Generator, RandomSource,
               what="an int seed, a numpy Generator, a RandomSource")
#: True or False.
BOOL = Instance(bool, np.bool_, what="a bool")


def describe(constraints) -> str:
    parts = ["None" if c is None else str(c) for c in constraints]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def _accepts(constraint, value) -> bool:
    return value is None if constraint is None else constraint.accepts(value)


def validate_parameters(estimator) -> None:
    """Check every declared parameter of ``estimator`` against its class's ``_parameter_constraints``."""
    cls = type(estimator)
    for name, constraints in cls._parameter_constraints.items():
        value = getattr(estimator, name)
        if not any(_accepts(c, value) for c in constraints):
            raise ParameterError(
                f"The '{name}' parameter of {cls.__name__} must be {describe(constraints)}. Got {value!r}."
            )


# ---- constraints many mechanisms share -------------------------------------------------------
EPSILON = [Interval(Real, 0, None, closed="right")]
DOMAIN = [None, Instance(EncodedDomain)]
SEED = [None, RNG]
N_CLASSES = [None, Interval(Integral, 1, None, closed="left")]
POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
FRACTION = [Interval(Real, 0, 1, closed="neither")]
PUBLIC_ARRAY = [None, ArrayLike]
ARRAY_OR_FILE = [None, ArrayLike, Instance(str, Path, what="a file path")]
SHARES = [None, Instance(dict, what="a dict of shares")]
#: epsilon, domain and rng, which (nearly) every mechanism takes.
COMMON = {"epsilon": EPSILON, "domain": DOMAIN, "rng": SEED}
