"""privrelease: release a sensitive table with a differential-privacy guarantee.

A data custodian gives a table and its schema (the public facts: bounds, levels, precision, the label)
and gets back a synthetic table, a certificate that states the guarantee, and (with a ledger) the
charge against the dataset's total budget. The default mechanism, ``gauss-copula``, releases DP
one-way histograms of every column on cells taken from the schema, a Gaussian mixture on the
columns' normal scores and a privately chosen tree of measured pairs of columns, with
zero-concentrated-DP accounting; the published mechanisms it builds on (DP PCA and LDA, PCA-Gauss,
random compression, JUPA) and their baselines are there too (``privrelease mechanisms``).

One release with the default, through the scikit-learn-style :class:`Synthesizer`:

>>> from privrelease import Synthesizer, release
>>> from privrelease.datasets import load_example
>>> df, schema = load_example("adult")
>>> df = df[schema.names].head(2000)         # the schema's 11 columns, 2,000 records
>>> synth = Synthesizer(schema, epsilon=1.0, rng=0).fit(df)
>>> synthetic = synth.sample(100)
>>> list(synthetic.columns) == schema.names, len(synthetic)
(True, 100)
>>> cert = synth.certificate_
>>> cert.mechanism, cert.guarantee, cert.epsilon
('gauss-copula', '(epsilon,delta)-DP', 1.0)

The same release as one call, which returns the table, the publishable certificate and the private
diagnostics (``rng=0`` seeds the noise for this example; a real release leaves ``rng=None``):

>>> result = release(df, schema, epsilon=1.0, rng=0)
>>> result.certificate.mechanism, len(result.data)
('gauss-copula', 2000)

The command line does the same on files: ``privrelease release --example adult --epsilon 1 --out
released.csv --certificate cert.json``.
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
