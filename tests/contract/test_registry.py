"""The mechanism registry is an explicit tuple, and the package exports every registered class."""

import importlib
import pkgutil

import privrelease.mechanisms as mechanisms
from privrelease.mechanisms import MECHANISMS, Mechanism, get_mechanism, list_mechanisms


def _named_mechanism_classes():
    """Every concrete mechanism class (one with a ``name``) defined anywhere under the package."""
    found = set()
    for info in pkgutil.walk_packages(mechanisms.__path__, mechanisms.__name__ + "."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Mechanism) and obj.__module__ == module.__name__ and obj.name:
                found.add(obj)
    return found


def test_every_named_mechanism_class_is_registered():
    assert _named_mechanism_classes() == set(MECHANISMS)


def test_package_exports_every_registered_class():
    for cls in MECHANISMS:
        assert cls.__name__ in mechanisms.__all__
        assert getattr(mechanisms, cls.__name__) is cls


def test_lookup_is_by_name_and_listing_sorted():
    names = [cls.name for cls in list_mechanisms()]
    assert names == sorted(names) and len(names) == len(set(names)) == len(MECHANISMS)
    for cls in MECHANISMS:
        assert get_mechanism(cls.name) is cls


def test_no_register_decorator_left():
    """Nothing can add to the registry as an import side effect."""
    assert not hasattr(mechanisms, "register")
    assert not hasattr(importlib.import_module("privrelease.mechanisms.base"), "register")
