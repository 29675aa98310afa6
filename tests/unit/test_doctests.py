"""Run the docstring examples of every module of the installed package."""

import doctest
import importlib
import pkgutil

import pytest

import privrelease

MODULES = sorted(m.name for m in pkgutil.walk_packages(privrelease.__path__, "privrelease."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
