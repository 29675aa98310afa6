"""privrelease: private release of sensitive tables through component analysis.

>>> from privrelease import Schema, release
>>> from privrelease.datasets import load_example
>>> df, schema = load_example("adult")
>>> result = release(df.head(500), schema, mechanism="laplace", epsilon=1.0, rng=0)
>>> list(result.data.columns) == schema.names, result.certificate.guarantee
(True, 'epsilon-DP')
"""

import importlib
import sys
import types

from ._version import __version__

# The public names are imported on first use, so that ``import privrelease`` (and the command
# line's ``--help``) does not pay for numpy, pandas, scikit-learn and scipy.
_LAZY = {
    "Schema": "privrelease.schema",
    "release": "privrelease.release",
    "release_file": "privrelease.release",
    "ReleaseResult": "privrelease.release",
    "Certificate": "privrelease.release",
    "Synthesizer": "privrelease.synthesizer",
}

__all__ = ["__version__", *_LAZY]


def _lazy(name):
    def get(self):
        return getattr(importlib.import_module(_LAZY[name]), name)

    def set_(self, value):
        # importing a submodule of the same name (privrelease.release) binds it on the package;
        # ``privrelease.release`` keeps meaning the function, as it did with eager imports
        if not isinstance(value, types.ModuleType):
            raise AttributeError(f"privrelease.{name} is read-only")

    return property(get, set_)


class _Package(types.ModuleType):
    """The package module, whose public names resolve on first use."""


for _name in _LAZY:
    setattr(_Package, _name, _lazy(_name))
del _name

sys.modules[__name__].__class__ = _Package
