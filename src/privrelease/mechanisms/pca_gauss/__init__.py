"""The PCA-Gauss family (Chanyaswad, Liu, Mittal): DP Gaussian models on PCA-reduced data.

:mod:`.basis` builds the PCA basis (same data, Laplace, Analyze-Gauss, public, split);
:mod:`.common` holds the sensitivities and the machinery the three mechanisms share;
``pca-gauss`` (:mod:`.unsupervised`), ``pca-gauss-supervised`` (:mod:`.supervised`), ``pca-gmm`` (:mod:`.gmm`).
"""

from .basis import (
    PCA_SOURCES,
    CENTRE,
    PCABasis,
    public_centre,
    centred_second_moment,
    lap_pca_sensitivity,
    analyze_gauss_l2_sensitivity,
    laplace_basis,
    analyze_gauss_basis,
    load_public_components,
    public_basis,
    split_rows,
)
from .common import (
    OUTPUT_SPACES,
    moment_sensitivities,
    spectrum_sensitivity,
    residual_sensitivity,
    gaussian_sample,
)
from .unsupervised import (
    PCAGauss,
)
from .supervised import (
    PCAGaussSupervised,
)
from .gmm import (
    PCAGMM,
)

__all__ = [
    "PCA_SOURCES",
    "CENTRE",
    "PCABasis",
    "public_centre",
    "centred_second_moment",
    "lap_pca_sensitivity",
    "analyze_gauss_l2_sensitivity",
    "laplace_basis",
    "analyze_gauss_basis",
    "load_public_components",
    "public_basis",
    "split_rows",
    "OUTPUT_SPACES",
    "moment_sensitivities",
    "spectrum_sensitivity",
    "residual_sensitivity",
    "gaussian_sample",
    "PCAGauss",
    "PCAGaussSupervised",
    "PCAGMM",
]
