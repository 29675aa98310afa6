"""Release mechanisms, one module per family; see :func:`list_mechanisms`."""

from .base import (
    AR,
    GUARANTEES,
    Capabilities,
    R1,
    R1_LABEL,
    Mechanism,
    RowAlignedMechanism,
    SyntheticMechanism,
    get_mechanism,
    list_mechanisms,
    register,
)
from .jiang_pca import JiangPCA
from .laplace import LaplaceIdentity
from ..dp.costs import BudgetSplit, PrivacyCost

__all__ = [
    "Mechanism", "Capabilities", "RowAlignedMechanism", "SyntheticMechanism", "register", "get_mechanism", "list_mechanisms",
    "GUARANTEES", "R1", "R1_LABEL", "AR", "PrivacyCost", "BudgetSplit", "JiangPCA", "LaplaceIdentity",
]
