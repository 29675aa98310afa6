"""privrelease: private release of sensitive tables through component analysis."""

from ._version import __version__
from .schema import Schema

__all__ = ["__version__", "Schema"]
