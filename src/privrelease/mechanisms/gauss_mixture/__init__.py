"""The Gaussian-mechanism mixture: ``gauss-pca`` (:mod:`.gauss_pca`) with its sensitivities and
per-record clipping in :mod:`.sensitivities`, and the default release ``gauss-copula``
(:mod:`.gauss_copula`: DP one-way marginals and a Gaussian copula around the mixture).
"""

from .sensitivities import (
    centre_sensitivity,
    domain_radius,
    sum_sensitivity,
    moment_sensitivity,
    COUNT_SENSITIVITY,
    residual_sensitivity,
    sq_distance_sensitivity,
    clip_rows,
)
from .gauss_pca import (
    DEFAULT_SPLIT,
    DEFAULT_WITHIN_RADIUS_SHARE,
    DEFAULT_SELECTION_SHARE,
    DEFAULT_COMPONENTS,
    DEFAULT_COMPONENT_GRID,
    PARTS,
    GaussPCA,
)
from .gauss_copula import GaussCopula

__all__ = [
    "centre_sensitivity",
    "domain_radius",
    "sum_sensitivity",
    "moment_sensitivity",
    "COUNT_SENSITIVITY",
    "residual_sensitivity",
    "sq_distance_sensitivity",
    "clip_rows",
    "DEFAULT_SPLIT",
    "DEFAULT_WITHIN_RADIUS_SHARE",
    "DEFAULT_SELECTION_SHARE",
    "DEFAULT_COMPONENTS",
    "DEFAULT_COMPONENT_GRID",
    "PARTS",
    "GaussPCA",
    "GaussCopula",
]
