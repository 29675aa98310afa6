"""Release mechanisms, one module per family; every class is exported here and registered in
:data:`~privrelease.mechanisms.registry.MECHANISMS` (see :func:`list_mechanisms`)."""

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
from .compression import Compression
from .diffgen import DiffGen
from .exponential import ExponentialRecords
from .gauss_pca import GaussPCA
from .jiang_lda import JiangLDA
from .jiang_pca import JiangPCA
from .jupa import JUPAMMDPerturbation
from .laplace import LaplaceIdentity
from .pca_gauss import PCAGMM, PCAGauss, PCAGaussSupervised
from .pca_gauss_baselines import BLR, MODIPS, BlockiJL, Compressive, JiangPublic
from .registry import MECHANISMS, get_mechanism, list_mechanisms

__all__ = [
    "Mechanism", "Capabilities", "RowAlignedMechanism", "SyntheticMechanism",
    "MECHANISMS", "get_mechanism", "list_mechanisms",
    "GUARANTEES", "R1", "R1_LABEL", "AR", "PrivacyCost", "BudgetSplit",
    "JiangPCA", "JiangLDA", "LaplaceIdentity", "ExponentialRecords", "DiffGen",
    "PCAGauss", "PCAGaussSupervised", "PCAGMM", "Compressive", "JiangPublic", "MODIPS", "BlockiJL", "BLR",
    "GaussPCA", "JUPAMMDPerturbation", "Compression",
]
