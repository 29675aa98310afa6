"""Run the docstring examples of the package and of every module in it."""

import doctest
import importlib
import pkgutil

import pytest

import privrelease

# the package itself first (its docstring is the front door: ``help(privrelease)``), then every module
MODULES = ["privrelease", *sorted(m.name for m in pkgutil.walk_packages(privrelease.__path__, "privrelease."))]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
