"""The registry of release mechanisms: an explicit tuple of classes, looked up by ``name``.

A mechanism is released by the command line and listed by ``privrelease mechanisms`` only if it
appears in :data:`MECHANISMS`; importing a module never adds to it.
"""

from __future__ import annotations

from ..errors import UnknownMechanismError
from .base import GUARANTEES, Mechanism
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

MECHANISMS: tuple[type[Mechanism], ...] = (
    JiangPCA, JiangLDA, LaplaceIdentity, ExponentialRecords, DiffGen,
    PCAGauss, PCAGaussSupervised, PCAGMM, Compressive, JiangPublic, MODIPS, BlockiJL, BLR,
    GaussPCA, GaussCopula, JUPAMMDPerturbation, Compression,
)


def _by_name(classes) -> dict[str, type[Mechanism]]:
    out: dict[str, type[Mechanism]] = {}
    for cls in classes:
        if not cls.name:
            raise ValueError(f"{cls.__name__} needs a name to be registered")
        if cls.guarantee not in GUARANTEES:
            raise ValueError(f"{cls.name}: guarantee must be one of {GUARANTEES}")
        if cls.name in out:
            raise ValueError(f"two mechanisms are named '{cls.name}'")
        out[cls.name] = cls
    return out


_BY_NAME = _by_name(MECHANISMS)


def get_mechanism(name: str) -> type[Mechanism]:
    """The mechanism class registered under ``name``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnknownMechanismError(
            f"unknown mechanism '{name}'; available: {', '.join(sorted(_BY_NAME))}"
        ) from None


def list_mechanisms() -> list[type[Mechanism]]:
    """Every registered mechanism class, sorted by name."""
    return [_BY_NAME[k] for k in sorted(_BY_NAME)]
