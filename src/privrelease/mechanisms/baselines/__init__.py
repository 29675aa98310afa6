"""Baselines the papers compare against.

Jiang et al.'s: ``laplace-identity`` (:mod:`.laplace`), ``exponential-records`` (:mod:`.exponential`),
``diffgen`` (:mod:`.diffgen`). PCA-Gauss's (ALGORITHMS.md 3.10): the row-aligned projected identities
``compressive`` and ``jiang-public`` and k-ary randomized response for their labels (:mod:`.projected`),
``modips`` (:mod:`.modips`), ``blocki-jl`` (:mod:`.blocki_jl`), ``blr`` (:mod:`.blr`).
"""

from .laplace import (
    identity_sensitivity,
    LaplaceIdentity,
)
from .exponential import (
    utility_sensitivity,
    ExponentialRecords,
)
from .diffgen import (
    SCORES,
    MAX_CELLS,
    taxonomy_tree,
    infogain,
    max_score,
    score_sensitivity,
    DiffGen,
    b_minus_a,
)
from .projected import (
    randomized_response,
    compressive_sensitivity,
    Compressive,
    projection_l1_sensitivity,
    JiangPublic,
)
from .modips import (
    modips_sensitivities,
    MODIPS,
)
from .blocki_jl import (
    blocki_w,
    BlockiJL,
)
from .blr import (
    blr_utility_sensitivity,
    BLR,
)

__all__ = [
    "identity_sensitivity",
    "LaplaceIdentity",
    "utility_sensitivity",
    "ExponentialRecords",
    "SCORES",
    "MAX_CELLS",
    "taxonomy_tree",
    "infogain",
    "max_score",
    "score_sensitivity",
    "DiffGen",
    "b_minus_a",
    "randomized_response",
    "compressive_sensitivity",
    "Compressive",
    "projection_l1_sensitivity",
    "JiangPublic",
    "modips_sensitivities",
    "MODIPS",
    "blocki_w",
    "BlockiJL",
    "blr_utility_sensitivity",
    "BLR",
]
