"""Estimation from released measurements: post-processing that sees only noisy marginals and their
noise scales, never the data or the privacy budget (kept apart from the mechanisms that release them)."""

from .tables import class_tables, fitted_table, rake, transport_projection
from .tilt import Measurement, PoolFit, Tilt, flat_cells

__all__ = ["Measurement", "PoolFit", "Tilt", "class_tables", "fitted_table", "flat_cells", "rake",
           "transport_projection"]
