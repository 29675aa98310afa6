"""Utility/privacy projections (JUPA, RUCA, DCA, MDR and plain ones, :mod:`.jupa`) and the MMD
perturbation built on them, with the ``jupa-mmd`` mechanism (:mod:`.mmd`).
"""

from .jupa import (
    scatter_matrices,
    Projection,
    JUPA,
    RUCA,
    DCA,
    MDR,
    PCAProjection,
    RandomProjection,
    IdentityProjection,
    make_projection,
)
from .mmd import (
    UPDATE_RULES,
    MMDPerturbation,
    JUPAMMDPerturbation,
)

__all__ = [
    "scatter_matrices",
    "Projection",
    "JUPA",
    "RUCA",
    "DCA",
    "MDR",
    "PCAProjection",
    "RandomProjection",
    "IdentityProjection",
    "make_projection",
    "UPDATE_RULES",
    "MMDPerturbation",
    "JUPAMMDPerturbation",
]
