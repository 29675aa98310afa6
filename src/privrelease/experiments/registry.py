"""Registry of paper reproductions (``privrelease reproduce NAME``).

Each reproduction is a function ``run(out_dir, data_dir=None, quick=False, seed=0, progress=None) -> dict``
that regenerates a figure or table on real data, writes ``out_dir/NAME.json`` (our numbers beside the
paper's) and ``out_dir/NAME.png``, and returns the JSON dictionary. ``quick=True`` runs a small real slice
(used in CI). :data:`REPRODUCTIONS` lists them all by name; a runner's module is imported only when
the reproduction is run, so listing them stays cheap.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import PrivReleaseError


@dataclass(frozen=True)
class Reproduction:
    """One entry of :data:`REPRODUCTIONS`.

    ``target`` is ``"module:function"`` inside ``privrelease.experiments``; the module is imported
    only when :attr:`run` is looked up, so listing the reproductions imports no numerical library.
    """

    name: str
    paper: str
    description: str
    target: str

    @property
    def run(self) -> Callable[..., dict]:
        module, _, function = self.target.partition(":")
        return getattr(importlib.import_module(f"{__package__}.{module}"), function)


_JIANG = "Jiang et al. 2013"
_PCA_GAUSS = "Chanyaswad, Liu, Mittal 2017 (PCA-Gauss, arXiv:1709.00054)"
_ZHOU = "Zhou, Ligett, Wasserman 2009"
_ZHUANG = "Zhuang & Chang"

# Every reproduction, by name. A new one is a function with the signature above in a module of
# this package and a line here (tests/contract/test_experiments_registry.py checks both ways).
REPRODUCTIONS: tuple[Reproduction, ...] = (
    Reproduction("gauss-pca-bench", "gauss-pca (this project)",
                 "Default release: HAPT accuracy, Adult accuracy/AUC vs MST, streamed 1M x 100 time",
                 "gauss_pca_bench:run"),
    Reproduction("jiang-fig1", _JIANG,
                 "toy height/weight table: MSE of attribute-wise vs component-wise Laplace noise over epsilon",
                 "jiang_fig1:run"),
    Reproduction("jiang-fig2", _JIANG,
                 "Adult: eigen-energy; MSE of PCA-PPDP (k=1..10) vs LAP and EXP over epsilon, 10 trials, t-tests",
                 "jiang_fig2:run"),
    Reproduction("jiang-fig3", _JIANG,
                 "Adult: ACA and AUC (LDA, C4.5-style tree) of DP-LDA (corrected, paper) vs DiffGen-INFOGAIN/MAX",
                 "jiang_fig3:run"),
    Reproduction("jiang-fig4", _JIANG,
                 "Adult: entropy and KL divergence of released data, DP-LDA vs DiffGen-INFOGAIN/MAX",
                 "jiang_fig4:run"),
    Reproduction("pca-gauss-fig1", _PCA_GAUSS,
                 "Figure 1: utility of PCA-Gauss against the dimension P for clustering, classification and "
                 "regression at several epsilons",
                 "pca_gauss_repro:run_fig1"),
    Reproduction("pca-gauss-table2", _PCA_GAUSS,
                 "Table II: clustering (K-means silhouette) on GFE (16 of 18 videos), epsilon = 1, all methods",
                 "pca_gauss_repro:run_table2"),
    Reproduction("pca-gauss-table3", _PCA_GAUSS,
                 "Table III: classification (SVM) on HAPT features (binary, 6-class) and gas drift; PCA-Gauss GMM "
                 "with PubPCA / LapPCA / AG-PCA vs baselines, epsilon = 1",
                 "pca_gauss_repro:run_table3"),
    Reproduction("pca-gauss-table4", _PCA_GAUSS,
                 "Table IV: regression (kernel ridge RMSE) on Communities and Crime; PCA-Gauss Alg. 2 vs baselines",
                 "pca_gauss_repro:run_table4"),
    Reproduction("zhou-pca-bound", _ZHOU,
                 "PCA from compressed data: top-D projector distance vs m beside ||B||_F/delta_D (HAPT, GFE, Gaussian)",
                 "zhou:run_pca_bound"),
    Reproduction("zhou-privacy-loss", _ZHOU,
                 "Example III.6: exact privacy loss of a neighbour pair vs m and p beside Theorem IV.6; p = o(n^(1/6))",
                 "zhou:run_privacy_loss"),
    Reproduction("zhuang-table", _ZHUANG,
                 "the Tables I-III protocol on any table: --data --schema --utility-label --privacy-label --k "
                 "--per-combination",
                 "zhuang:run_generic"),
    Reproduction("zhuang-table1", _ZHUANG,
                 "HAPT features (HAR substitute): activity utility, subject privacy, K=5", "zhuang:run_table1"),
    Reproduction("zhuang-table2", _ZHUANG, "UCI Adult: income utility, gender privacy, K=1", "zhuang:run_table2"),
    Reproduction("zhuang-table3", _ZHUANG, "UCI Adult: gender utility, income privacy, K=1", "zhuang:run_table3"),
)

_BY_NAME = {r.name: r for r in REPRODUCTIONS}


def list_reproductions() -> list[Reproduction]:
    return [_BY_NAME[k] for k in sorted(_BY_NAME)]


def get_reproduction(name: str) -> Reproduction:
    if name not in _BY_NAME:
        raise PrivReleaseError(f"unknown reproduction '{name}'; available: {', '.join(sorted(_BY_NAME))}")
    return _BY_NAME[name]


def full_result(out_dir: Path, name: str) -> Path | None:
    """``out_dir/NAME.json`` when it holds a full (not ``--quick``) result, else None.

    A result whose JSON cannot be read, or does not say ``"quick": true``, counts as full:
    a quick slice must never silently replace it.
    """
    path = Path(out_dir) / f"{name}.json"
    if not path.exists():
        return None
    try:
        return None if json.loads(path.read_text()).get("quick") is True else path
    except (OSError, ValueError, AttributeError):
        return path


def write_json(result: dict, out_dir: Path, name: str) -> Path:
    from ..io import atomic_write
    from ..release import _jsonable

    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    with atomic_write(path, "w") as fh:
        fh.write(json.dumps(_jsonable(result), indent=2))
    return path


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend (figures are only written to files)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, out_dir: Path, name: str) -> Path:
    from ..io import atomic_write

    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.png"
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
