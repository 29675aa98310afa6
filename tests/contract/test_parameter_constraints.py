"""Every registered mechanism declares its parameters' constraints, checked with one message format."""

import inspect
import math
import re

import numpy as np
import pytest

from privrelease.errors import ParameterError
from privrelease.mechanisms import MECHANISMS, GaussPCA, JiangPCA
from privrelease.mechanisms.constraints import BOOL, RNG, Instance, Interval, Options, describe, validate_parameters

from numbers import Integral, Real

MESSAGE = re.compile(r"^The '(\w+)' parameter of (\w+) must be .+\. Got .+\.$")


def _params(cls):
    return [n for n in inspect.signature(cls.__init__).parameters if n != "self"]


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.name)
def test_every_constructor_parameter_is_declared(cls):
    assert set(cls._parameter_constraints) == set(_params(cls))


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.name)
def test_defaults_satisfy_the_declared_constraints(cls):
    validate_parameters(cls())


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.name)
def test_a_wrong_value_gets_the_one_message_format(cls):
    X = np.full((20, 3), 0.5)
    y = np.arange(20) % 2
    for name in _params(cls):
        est = cls().set_params(**{name: object()})
        with pytest.raises(ParameterError) as err:
            est.fit(X, y)
        m = MESSAGE.match(str(err.value))
        assert m and m.groups() == (name, cls.__name__), str(err.value)


def test_message_text():
    with pytest.raises(ParameterError, match=r"^The 'epsilon' parameter of GaussPCA must be a float in \(0, inf\]\. Got -1\.$"):
        GaussPCA(epsilon=-1).fit(np.full((10, 2), 0.5))
    with pytest.raises(ParameterError, match=r"^The 'n_components' parameter of JiangPCA must be an int in \[1, inf\)\. Got 2\.5\.$"):
        JiangPCA(n_components=2.5).fit_stats(None, p=3)


def test_constraint_kinds():
    assert Interval(Integral, 1, None, closed="left").accepts(np.int64(3))
    assert not Interval(Integral, 1, None, closed="left").accepts(True)
    assert not Interval(Real, 0, 1, closed="neither").accepts(1.0)
    assert not Interval(Real, 0, None, closed="right").accepts(math.nan)
    assert Interval(Real, 0, None, closed="right").accepts(math.inf)
    assert Options("a", "b").accepts("a") and not Options("a", "b").accepts("c")
    assert BOOL.accepts(False) and not BOOL.accepts(0)
    assert RNG.accepts(3) and RNG.accepts(np.random.default_rng(0)) and not RNG.accepts(True)
    assert describe([None, Instance(dict, what="a dict")]) == "None or a dict"
