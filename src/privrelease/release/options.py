"""The options of one file release, as one typed value.

:class:`ReleaseOptions` holds what the release itself takes (privacy's delta, the noise source, what to do
with out-of-bounds values, how many records to draw, where the certificate and ledger are, how the input is
read and on which engine), apart from the mechanism's own parameters. The CLI builds it once from its
flags; :func:`~privrelease.release.pipeline.release_file` builds it from its keywords. Each value is
checked where it is used (the ledger's, the engine's, the output's checks), as before.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path


@dataclass(frozen=True)
class ReleaseOptions:
    """The release's own options of :func:`~privrelease.release.pipeline.release_file` (its keywords
    other than ``progress`` and the mechanism's parameters)."""

    delta: float | None = None
    rng: object = None
    on_out_of_bounds: str = "clip"
    n_synthetic: int | None = None
    certificate_path: str | Path | None = None
    ledger: object = None
    dataset_id: str | None = None
    budget: object = None
    chunk_rows: int = 200_000
    engine: str = "local"
    scheduler: str | None = None
    workers: int | None = None
    overwrite: bool = False
    sep: str | None = None
    encoding: str | None = None

    @classmethod
    def names(cls) -> frozenset:
        """The options' names (a mechanism parameter may not take one)."""
        return frozenset(f.name for f in fields(cls))
