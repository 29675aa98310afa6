"""Estimation from released measurements: post-processing that sees only noisy marginals and their
noise scales, never the data or the privacy budget (kept apart from the mechanisms that release them)."""

from .tables import class_tables, fitted_table, rake, transport_projection

__all__ = ["class_tables", "fitted_table", "rake", "transport_projection"]
