"""Release mechanisms, one subpackage per family, every class exported here.

Layout (each family's own ``__init__`` lists its public names):

* :mod:`.base` - the estimator base classes, :class:`Capabilities`, the neighbouring relations.
* :mod:`.registry` - :data:`MECHANISMS`, the explicit tuple of registered classes, with
  :func:`get_mechanism` and :func:`list_mechanisms`; importing a module never registers anything.
* :mod:`.jiang` - Jiang et al.'s PCA publishing (``jiang-pca``, :mod:`.jiang.pca`) and LDA
  synthesis (``jiang-lda``, :mod:`.jiang.lda`).
* :mod:`.pca_gauss` - the PCA-Gauss family: the PCA basis (:mod:`.pca_gauss.basis`), shared
  sensitivities and machinery (:mod:`.pca_gauss.common`), ``pca-gauss``, ``pca-gauss-supervised``
  and ``pca-gmm`` (:mod:`.pca_gauss.unsupervised`, :mod:`.pca_gauss.supervised`, :mod:`.pca_gauss.gmm`).
* :mod:`.gauss_mixture` - the default release ``gauss-copula`` (:mod:`.gauss_mixture.gauss_copula`) and the
  Gaussian-mechanism mixture ``gauss-pca`` inside it (:mod:`.gauss_mixture.gauss_pca`), with its sensitivities
  and clipping (:mod:`.gauss_mixture.sensitivities`).
* :mod:`.projections` - JUPA and the other projections (:mod:`.projections.jupa`) and the MMD
  perturbation with the ``jupa-mmd`` mechanism (:mod:`.projections.mmd`).
* :mod:`.compression` - distributional privacy by random compression: formulas
  (:mod:`.compression.bounds`) and the ``compression`` mechanism (:mod:`.compression.mechanism`).
* :mod:`.baselines` - what the papers compare against: Jiang et al.'s ``laplace-identity``,
  ``exponential-records`` and ``diffgen``; PCA-Gauss's ``compressive`` and ``jiang-public``
  (:mod:`.baselines.projected`), ``modips``, ``blocki-jl`` and ``blr``.

The DP primitives the families share (calibration, selection, rounding, sensitivities, costs,
quantiles, partition) live one layer down, in :mod:`privrelease.dp`; mechanisms import from
there and from ``linalg``/``noise``/``schema``, never from ``release``, ``evaluation`` or above.
"""

from ..dp.costs import BudgetSplit, PrivacyCost
from .base import (
    AR,
    GUARANTEES,
    R1,
    R1_LABEL,
    Capabilities,
    Mechanism,
    RowAlignedMechanism,
    SyntheticMechanism,
)
from .compression.mechanism import Compression
from .baselines.diffgen import DiffGen
from .baselines.exponential import ExponentialRecords
from .gauss_mixture.gauss_copula import GaussCopula
from .gauss_mixture.gauss_pca import GaussPCA
from .jiang.lda import JiangLDA
from .jiang.pca import JiangPCA
from .projections.mmd import JUPAMMDPerturbation
from .baselines.laplace import LaplaceIdentity
from .pca_gauss.gmm import PCAGMM
from .pca_gauss.supervised import PCAGaussSupervised
from .pca_gauss.unsupervised import PCAGauss
from .baselines.blocki_jl import BlockiJL
from .baselines.blr import BLR
from .baselines.modips import MODIPS
from .baselines.projected import Compressive, JiangPublic
from .registry import MECHANISMS, get_mechanism, list_mechanisms

__all__ = [
    "Mechanism", "Capabilities", "RowAlignedMechanism", "SyntheticMechanism",
    "MECHANISMS", "get_mechanism", "list_mechanisms",
    "GUARANTEES", "R1", "R1_LABEL", "AR", "PrivacyCost", "BudgetSplit",
    "JiangPCA", "JiangLDA", "LaplaceIdentity", "ExponentialRecords", "DiffGen",
    "PCAGauss", "PCAGaussSupervised", "PCAGMM", "Compressive", "JiangPublic", "MODIPS", "BlockiJL", "BLR",
    "GaussPCA", "GaussCopula", "JUPAMMDPerturbation", "Compression",
]
