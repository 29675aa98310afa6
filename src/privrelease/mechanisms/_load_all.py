"""Imports every mechanism module so that the registry is complete (one line per module)."""

from . import jiang_pca  # noqa: F401
from . import laplace  # noqa: F401
from . import jiang_lda  # noqa: F401
from . import exponential  # noqa: F401
from . import diffgen  # noqa: F401
from . import compression  # noqa: F401
from . import gauss_pca  # noqa: F401
from . import gauss_copula  # noqa: F401
from . import jupa  # noqa: F401
from . import pca_gauss  # noqa: F401
from . import pca_gauss_baselines  # noqa: F401
