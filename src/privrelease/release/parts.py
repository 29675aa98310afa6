"""Released records part by part: row-aligned transforms of each input part, synthetic draws per part.

A *part* is one unit of output: for a row-aligned mechanism, one input chunk (local engine)
or partition (Dask); for a synthetic one, ``chunk_rows`` draws (the last part fewer). The
functions here are pure and run wherever the part is: in the release process locally, on
a worker on Dask, where a part is written straight into the dataset's temporary directory.

Randomness per part
-------------------
Each part gets its own noise source. A real release (secure noise) opens a fresh OS-entropy
source per part. A seeded release draws one 63-bit base from the fitted mechanism's
seeded generator on the client, and part ``k`` draws from ``default_rng([base, k])``: the
same seed and the same parts give the same output on every engine and any number of
workers (synthetic parts depend only on ``chunk_rows``; row-aligned parts on how the input
is partitioned).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from ..io import file_sha256
from ..noise.samplers import SecureSource, SeededSource
from .output import decode_output, write_frames

PART_NAME = "part-{:05d}.parquet"


def part_seed_base(mech) -> int | None:
    """The base of the per-part seeds (None for secure noise); drawn once, on the client."""
    src = mech.source_
    return None if src.secure else int(src.generator.integers(2**63 - 1))


def part_mechanism(mech, base: int | None, k: int):
    """A shallow copy of the fitted mechanism drawing from part ``k``'s own source."""
    return mech.with_source(SecureSource() if base is None else SeededSource(np.random.default_rng([base, int(k)])))


def synthetic_parts(m: int | None, chunk_rows: int, in_chunks: bool) -> list[tuple[int, int | None]]:
    """``(part index, rows)`` of a synthetic release: ``chunk_rows`` per part when the mechanism
    draws in chunks, otherwise one part (``rows`` None: the size is the mechanism's)."""
    if m is None or not in_chunks:
        return [(0, m)]
    step = max(int(chunk_rows), 1)
    return [(k, min(step, m - s)) for k, s in enumerate(range(0, m, step))]


def synthetic_part(k: int, rows: int | None, mech, base, enc, lab, start: int = 0):
    """Part ``k``: ``rows`` records drawn from the released model, decoded (``start``: the index of its
    first record in the release)."""
    pm = part_mechanism(mech, base, k)
    Xs, ys = pm.sample(rows)
    return decode_output(pm, Xs, ys, enc, lab, start)


def transform_part(k: int, X, mech, base, enc, start: int = 0):
    """Part ``k`` of a row-aligned release: the transform of encoded rows ``X``, decoded."""
    pm = part_mechanism(mech, base, k)
    return decode_output(pm, pm.transform(X), None, enc, None, start)


#: Dask partitions' lengths are not known when their parts are planned: part ``k``'s fresh identifiers
#: start at ``k * DASK_PART_IDS`` (distinct, not consecutive).
DASK_PART_IDS = 10**12


def transform_frame(df, k: int, record_map, mech, base, enc):
    """Part ``k`` from a raw input partition (on a Dask worker): encode, transform, decode."""
    return transform_part(k, record_map.encode(df).X, mech, base, enc, k * DASK_PART_IDS)


def write_part(frame, folder: str, k: int) -> tuple[int, list, str]:
    """Write one part into the dataset folder; returns (rows, columns, the part's SHA-256)."""
    path = Path(folder) / PART_NAME.format(k)
    n, cols = write_frames([frame], path, "parquet")
    return n, cols, file_sha256(path)


def dataset_summary(written: list[tuple[int, list, str]]) -> tuple[int, list, str]:
    """(rows, columns, hash) of a dataset from its parts' summaries, in part order; the hash is
    the SHA-256 of the lines ``part-NNNNN.parquet <part sha256>``."""
    lines = "".join(f"{PART_NAME.format(k)} {sha}\n" for k, (_, _, sha) in enumerate(written))
    cols = next((c for _, c, _ in written if c), [])
    return sum(n for n, _, _ in written), cols, hashlib.sha256(lines.encode()).hexdigest()
