"""Jiang et al.'s PCA publishing (``jiang-pca``, row-aligned) and LDA synthesis (``jiang-lda``, synthetic).
"""

from .pca import (
    moment_sensitivity,
    paper_moment_sensitivity,
    projection_sensitivity,
    JiangPCA,
)
from .lda import (
    DEFAULT_SHARES,
    NOT_DP,
    lda_sensitivities,
    paper_lda_sensitivity,
    greedy_l1_sample,
    JiangLDA,
)

__all__ = [
    "moment_sensitivity",
    "paper_moment_sensitivity",
    "projection_sensitivity",
    "JiangPCA",
    "DEFAULT_SHARES",
    "NOT_DP",
    "lda_sensitivities",
    "paper_lda_sensitivity",
    "greedy_l1_sample",
    "JiangLDA",
]
