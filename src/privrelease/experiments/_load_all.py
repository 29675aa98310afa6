"""Imports every reproduction module so that the registry is complete (one line per module)."""

from . import jiang_fig1  # noqa: F401
from . import jiang_fig2  # noqa: F401
from . import jiang_fig3  # noqa: F401
from . import jiang_fig4  # noqa: F401
from . import zhou  # noqa: F401
from . import gauss_pca_bench  # noqa: F401
from . import zhuang  # noqa: F401
from . import pca_gauss_repro  # noqa: F401
