"""Registry of paper reproductions (``privrelease reproduce NAME``).

Each reproduction is a function ``run(out_dir, data_dir=None, quick=False, seed=0, progress=None) -> dict``
that regenerates a figure or table on real data, writes ``out_dir/NAME.json`` (our numbers beside the
paper's) and ``out_dir/NAME.png``, and returns the JSON dictionary. ``quick=True`` runs a small real slice
(used in CI).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import PrivReleaseError
from ..io import atomic_write


@dataclass(frozen=True)
class Reproduction:
    name: str
    paper: str
    description: str
    run: Callable[..., dict]


_REPRO: dict[str, Reproduction] = {}


def reproduction(name: str, paper: str, description: str):
    """Decorator registering a reproduction runner."""

    def deco(fn):
        _REPRO[name] = Reproduction(name, paper, description, fn)
        return fn

    return deco


def list_reproductions() -> list[Reproduction]:
    from . import _load_all  # noqa: F401

    return [_REPRO[k] for k in sorted(_REPRO)]


def get_reproduction(name: str) -> Reproduction:
    from . import _load_all  # noqa: F401

    if name not in _REPRO:
        raise PrivReleaseError(f"unknown reproduction '{name}'; available: {', '.join(sorted(_REPRO))}")
    return _REPRO[name]


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
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.png"
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
