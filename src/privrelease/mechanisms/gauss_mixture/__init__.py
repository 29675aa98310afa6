"""The Gaussian-mechanism mixture: ``gauss-pca`` (:mod:`.gauss_pca`), the default release, with its
sensitivities and per-record clipping in :mod:`.sensitivities`.
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
]
