"""Distributional privacy by random compression (Zhou, Ligett, Wasserman): formulas in :mod:`.bounds`,
the ``compression`` mechanism in :mod:`.mechanism`.
"""

from .bounds import (
    C1,
    C2,
    C_PAPER,
    DISTRIBUTIONAL_EXPLANATION,
    min_rows,
    truncation_threshold,
    default_delta_max,
    normalized_covariance,
    compressed_covariance,
    top_subspace,
    projector_distance,
    pca_utility_bound,
)
from .mechanism import (
    Compression,
)

__all__ = [
    "C1",
    "C2",
    "C_PAPER",
    "DISTRIBUTIONAL_EXPLANATION",
    "min_rows",
    "truncation_threshold",
    "default_delta_max",
    "normalized_covariance",
    "compressed_covariance",
    "top_subspace",
    "projector_distance",
    "pca_utility_bound",
    "Compression",
]
