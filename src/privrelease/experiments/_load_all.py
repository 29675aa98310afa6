"""Imports every reproduction module so that the registry is complete (one line per module)."""

from . import jiang_fig1  # noqa: F401
from . import pca_gauss_repro  # noqa: F401
