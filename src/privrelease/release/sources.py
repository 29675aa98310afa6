"""Where a file release reads from and computes on: the input files and the engine.

An input is one CSV/Parquet file, a directory of them, or a glob pattern (``data/part-*.parquet``);
the files are read in sorted order, as one table. The engine is ``local`` (chunks streamed on
this machine) or ``dask``: an existing ``dask.distributed`` cluster named by its scheduler
address, a :class:`~distributed.LocalCluster` of N worker processes started for the release,
or (neither given) Dask's default local scheduler.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputDataError, ParameterError, option
from ..io import file_sha256, iter_table_chunks
from ..io.tables import count_rows, csv_options, input_format
from ..schema import Schema

ENGINES = ("local", "dask")
#: How long to try reaching a named scheduler before the release is refused.
SCHEDULER_TIMEOUT = "10s"
_TABLE_SUFFIXES = (".csv", ".csv.gz", ".parquet", ".pq")
_PARTITION_BYTES = 64 * 2**20  # uncompressed bytes of a Parquet partition (the selected columns)


def resolve_inputs(spec) -> list[Path]:
    """The input files of ``spec``: a file, a directory (its CSV/Parquet files) or a glob pattern.

    All files must have one format; an empty file, no match or a mix of formats is refused."""
    text = str(spec)
    path = Path(text)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")
                       and p.name.lower().endswith(_TABLE_SUFFIXES))
        if not files:
            raise InputDataError(f"input directory {path} holds no .csv, .csv.gz or .parquet file")
    elif any(ch in text for ch in "*?[") and not path.exists():
        files = sorted(Path(p) for p in glob.glob(text) if Path(p).is_file())
        if not files:
            raise InputDataError(f"no input file matches {text}")
    else:
        if not path.exists():
            raise InputDataError(f"input file {path} does not exist")
        files = [path]
    formats = {input_format(p)[0] for p in files}
    if len(formats) > 1:
        raise InputDataError(f"input {text} mixes formats ({', '.join(sorted(formats))}); give one format")
    for p in files:
        if p.stat().st_size == 0:
            raise InputDataError(f"input file {p} is empty (no header, no records)")
    return files


@dataclass
class FileSource:
    """The input files, read in chunks (locally) or as partitions (Dask) as often as a pass needs."""

    paths: list
    schema: Schema
    chunk_rows: int
    sep: str | None = None  # a CSV's delimiter (None: sniffed from its first lines)
    encoding: str | None = None  # a CSV's text encoding (None: UTF-8)

    def chunks(self):
        for path in self.paths:
            yield from iter_table_chunks(path, self.schema, self.chunk_rows, self.sep, self.encoding)

    def count_rows(self) -> int:
        return sum(count_rows(p, self.schema, self.chunk_rows, self.sep, self.encoding) for p in self.paths)

    def sha256(self) -> str:
        """The input's hash: the file's, or for several files the hash of their names and hashes."""
        if len(self.paths) == 1:
            return file_sha256(self.paths[0])
        lines = "".join(f"{p.name} {file_sha256(p)}\n" for p in self.paths)
        return hashlib.sha256(lines.encode()).hexdigest()

    def dask_partitions(self) -> list:
        """The input as delayed pandas partitions, in the files' sorted order and each file's row order
        (the global record index of an indexed pass depends on it): CSV in 64 MB blocks; Parquet as
        runs of row groups of about 64 MiB, each read by pyarrow in one task (a worker holds a few
        copies of its partition while encoding: measured 2.2 GB peak per worker with one 250 MB file
        per partition)."""
        from ..io.tables import csv_read_options

        files = [str(p) for p in self.paths]
        if input_format(self.paths[0])[0] == "csv":
            import dask.dataframe as dd

            opts = csv_options(self.paths[0], self.sep, self.encoding)
            ddf = dd.read_csv(files, **csv_read_options(self.schema), skipinitialspace=True,
                              blocksize=None if opts["compression"] else "64MB", **opts)
            return ddf.to_delayed()
        return self._parquet_partitions()

    def _parquet_partitions(self) -> list:
        import dask

        from ..io.tables import parquet_row_group_spans, read_parquet_row_groups

        read = dask.delayed(read_parquet_row_groups)
        parts = [read(str(p), span, self.schema) for p in self.paths
                 for span in parquet_row_group_spans(p, self.schema, _PARTITION_BYTES)]
        # no records at all: one empty partition (the columns, no rows), as a local chunk would be
        return parts or [read(str(self.paths[0]), [], self.schema)]


def check_engine(engine: str, scheduler: str | None, workers: int | None):
    """Refuse an unknown engine, cluster options without ``engine='dask'`` and a missing dask."""
    if engine not in ENGINES:
        raise ParameterError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine != "dask" and (scheduler is not None or workers is not None):
        raise ParameterError("--scheduler and --workers need --engine dask")
    if scheduler is not None and workers is not None:
        raise ParameterError("give either --scheduler ADDRESS (an existing cluster) or --workers N (a local one)")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ParameterError(f"{option('workers', '--workers')} must be an integer >= 1, got {workers!r}")
    if engine == "dask":
        try:
            import dask.dataframe  # noqa: F401
            if scheduler is not None or workers is not None:
                import distributed  # noqa: F401
        except ImportError:
            raise ParameterError("--engine dask needs the optional dependency dask[dataframe] (and "
                                 "dask[distributed] for --scheduler/--workers): pip install 'privrelease[dask]'") \
                from None


# glibc's allocator in the workers of a cluster started for the release. Dask starts workers with
# MALLOC_TRIM_THRESHOLD_=65536, which also pins glibc's mmap threshold at 128 KiB: every array above
# it (a 200,000-row column is 1.6 MB) is then mapped fresh and page-faulted in, and the maps that
# allocate many temporaries run 2-2.5x slower than in the local engine's process (measured:
# gauss-copula's maps on one 625,000 x 50 file, 14-16 s of CPU against 6-7 s). With 32 MiB
# thresholds (glibc's largest mmap threshold) temporaries are reused from the heap as in an
# ordinary process: on 10^7 x 50 rows gauss-copula's CPU per row-pass on Dask fell from 2.5-2.9x
# the local engine's to 1.0-1.3x (one worker: 94 s against 227-247 s) for 3-8% more peak memory
# per worker (1.10-1.15 against 1.04-1.09 GB; docs/history/dask.md). As in Dask, a variable
# already set in the environment wins. Set the same variables in the workers' environment of an
# existing cluster (``--scheduler``) for the same effect.
WORKER_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(32 * 2**20)}


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int | None):
    """A ``distributed.Client`` for the release (None: Dask's default scheduler), closed afterwards."""
    if scheduler is None and workers is None:
        yield None
        return
    from distributed import Client, LocalCluster

    if workers is not None:
        import dask

        pre_spawn = {**dask.config.get("distributed.nanny.pre-spawn-environ", {}), **WORKER_MALLOC_ENV}
        with dask.config.set({"distributed.nanny.pre-spawn-environ": pre_spawn}), \
                LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cl, \
                Client(cl) as client:
            yield client
        return
    try:
        client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ParameterError(f"cannot reach the Dask scheduler at {scheduler}: {str(exc).splitlines()[0]}") from None
    with client:
        yield client
