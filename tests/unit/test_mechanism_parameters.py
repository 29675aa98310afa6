"""``privrelease mechanisms`` explains every parameter of every mechanism, from the class docstrings."""

import inspect
import json

import pytest

from privrelease.mechanisms import list_mechanisms

MECHANISMS = list_mechanisms()


@pytest.mark.parametrize("cls", MECHANISMS, ids=[c.name for c in MECHANISMS])
def test_every_constructor_parameter_is_listed_with_a_description(cls):
    """Pins ``parameters: null`` in the listing of 15 of 16 mechanisms."""
    params = cls.info()["parameters"]
    expected = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    assert list(params) == expected
    for name, text in params.items():
        assert isinstance(text, str) and len(text.split()) >= 2, f"{cls.name}.{name}: {text!r}"
