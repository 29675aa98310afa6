"""Writing the released table: one file, or a Parquet dataset of part files, from either engine.

Locally the parts are computed here one at a time (memory of one part). On Dask every part
is computed on a worker: written there straight into the dataset's temporary directory (only
each part's row count and hash come back), or, for a single output file, sent back in order
and written here. Either way the table goes into the transaction's temporary path and
appears only at its commit.
"""

from __future__ import annotations

from pathlib import Path

from ..io import file_sha256, table_format
from ..mechanisms import RowAlignedMechanism
from .parts import (dataset_summary, part_seed_base, synthetic_part, synthetic_parts, transform_frame,
                    transform_part, write_part)
from .output import write_frames


def is_dataset(out_path: Path) -> bool:
    """An output path without a table suffix (or an existing directory) names a Parquet dataset."""
    return out_path.is_dir() or str(out_path).endswith(("/", "\\")) or out_path.suffix == ""


def check_output(out_path: Path) -> None:
    if not is_dataset(out_path):
        table_format(out_path)  # an unsupported output type fails before anything else


def write_table_output(plan, fitted, source, engine, m, temp: Path, out_path: Path, progress=None):
    """Write the released records into ``temp`` (a file, or a directory for a dataset);
    returns (rows, columns, SHA-256 of the file or of the dataset's part list)."""
    base = part_seed_base(plan.mechanism)
    if engine.name == "dask":
        tasks = _dask_parts(plan, source, m, base, engine.client)
        if is_dataset(out_path):
            import dask

            written = engine.compute([dask.delayed(write_part)(t, str(temp), k) for k, t in enumerate(tasks)])
            return dataset_summary(list(written))
        frames = engine.iter_compute(tasks)
    else:
        frames = _local_parts(plan, fitted, source, m, base)
        if is_dataset(out_path):
            return dataset_summary([write_part(f, str(temp), k) for k, f in enumerate(frames)])
    fmt = table_format(out_path)
    n, cols = write_frames(frames, temp, fmt, str(out_path).lower().endswith(".gz"), progress)
    return n, cols, file_sha256(temp)


def _local_parts(plan, fitted, source, m, base):
    """The released parts computed here: synthetic draws, or transforms of each input chunk."""
    mech, enc, lab = plan.mechanism, plan.encoder, plan.label_encoder
    if not isinstance(mech, RowAlignedMechanism):
        parts = synthetic_parts(m, source.chunk_rows, mech.capabilities.samples_in_chunks)
        return (synthetic_part(k, rows, mech, base, enc, lab, k * source.chunk_rows) for k, rows in parts)
    if fitted.X is not None:
        step = source.chunk_rows
        blocks = (fitted.X[s:s + step] for s in range(0, fitted.X.shape[0], step))
    else:
        blocks = _encoded_blocks(plan, source)
    return _transformed(blocks, mech, base, enc)


def _transformed(blocks, mech, base, enc):
    """Row-aligned parts of consecutive encoded blocks (each numbered from its first row's index)."""
    start = 0
    for k, X in enumerate(blocks):
        yield transform_part(k, X, mech, base, enc, start)
        start += X.shape[0]


def _encoded_blocks(plan, source):
    """Encoded feature chunks of a fresh pass (row offsets kept, so errors name the file's rows)."""
    offset = 0
    for df in source.chunks():
        yield plan.record_map.encode(df, offset).X
        offset += len(df)


def _dask_parts(plan, source, m, base, client=None) -> list:
    """Delayed parts for the workers: transforms of each input partition, or synthetic draws. The fitted mechanism
    is sent once and shared by every part: on a cluster scattered to the workers (the released marginals of a table
    of continuous columns run to tens of MB, more than a task graph should carry), else one node of the graph."""
    import dask

    mech, enc, lab = plan.mechanism, plan.encoder, plan.label_encoder
    if client is not None:
        fitted_mech = client.scatter(mech, broadcast=True, hash=False)
    else:
        fitted_mech = dask.delayed(mech, traverse=False)
    if isinstance(mech, RowAlignedMechanism):
        return [dask.delayed(transform_frame)(d, k, plan.record_map, fitted_mech, base, enc)
                for k, d in enumerate(source.dask_partitions())]
    parts = synthetic_parts(m, source.chunk_rows, mech.capabilities.samples_in_chunks)
    return [dask.delayed(synthetic_part)(k, rows, fitted_mech, base, enc, lab, k * source.chunk_rows)
            for k, rows in parts]
