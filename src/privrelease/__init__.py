"""privrelease: private release of sensitive tables through component analysis.

>>> from privrelease import Schema, release
>>> from privrelease.datasets import load_example
>>> df, schema = load_example("adult")
>>> result = release(df.head(500), schema, mechanism="laplace", epsilon=1.0, rng=0)
>>> list(result.data.columns) == schema.names, result.certificate.guarantee
(True, 'epsilon-DP')
"""

from ._version import __version__
from .release import Certificate, ReleaseResult, release, release_file
from .schema import Schema

__all__ = ["__version__", "Schema", "release", "release_file", "ReleaseResult", "Certificate"]
