"""The release pipeline: schema -> parameters -> passes -> noise -> sample/transform -> write -> certificate.

:func:`release` works on an in-memory DataFrame; :func:`release_file` streams a CSV/Parquet
file in chunks, picking how to fit from the mechanism's declared
:class:`~privrelease.mechanisms.base.Capabilities` (one strategy function per kind of pass).
Both are one transaction with the optional ledger (see :mod:`privrelease.release.transaction`):
the charge is reserved before the mechanism touches the data and committed only when every
output is in place.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..engine import SufficientStats, release_threads, stream_stats
from ..engine.passes import DaskPasses
from ..errors import InputDataError, ParameterError, option
from ..io import warn_extra_columns
from ..io.tables import frame_sha256, table_columns
from ..mechanisms import RowAlignedMechanism
from ..schema import Schema
from .certificate import Certificate, ReleaseResult, diagnostics_path, make_certificate, make_diagnostics
from .construct import DEFAULT_MECHANISM, Plan, construct
from .emit import check_output, is_dataset, write_table_output
from .sources import FileSource, check_engine, dask_client, resolve_inputs
from .options import ReleaseOptions
from .output import decode_output, n_draw
from .progress import Progress, as_progress
from .transaction import Transaction, check_ledger_args, ledger_charge



# ---- in-memory release --------------------------------------------------------------

def release(
    data: pd.DataFrame,
    schema: Schema,
    mechanism: str = DEFAULT_MECHANISM,
    epsilon: float | None = None,
    *,
    delta: float | None = None,
    rng=None,
    on_out_of_bounds: str = "clip",
    n_synthetic: int | None = None,
    ledger=None,
    dataset_id: str | None = None,
    budget=None,
    **params,
) -> ReleaseResult:
    """Release ``data`` under ``schema`` with a registered mechanism.

    Parameters
    ----------
    data : pandas.DataFrame containing every schema column (others are ignored)
    schema : Schema, the declared public bounds and levels (never read from ``data``)
    mechanism : name from ``privrelease mechanisms``
    epsilon : finite number > 0 (a warning above 10); required, except by distributional mechanisms
    delta : for (epsilon, delta)-DP mechanisms; default ``min(1e-5, 1/(10 n))``; must be < 1/n
    rng : None for a real release (floating-point-safe noise from OS entropy); an int
        seed or a numpy Generator for reproducible experiments (certificate says so)
    on_out_of_bounds : "clip" (default; counted in the private diagnostics) or "error"
    n_synthetic : number of synthetic records (synthetic mechanisms; default n)
    ledger, dataset_id, budget : optional persistent budget accounting (``budget``: a total
        epsilon, ``"EPS,DELTA"`` or a PrivacyCost; dataset_id and budget need a ledger)
    **params : mechanism parameters (e.g. ``n_components=5``)

    Returns
    -------
    ReleaseResult with ``.data`` (DataFrame), ``.certificate`` (publishable) and
    ``.private_diagnostics`` (exact clip counts and input hash: never publish).
    """
    if not isinstance(data, pd.DataFrame):
        raise InputDataError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    check_ledger_args(ledger, dataset_id, budget)
    plan = construct(schema, mechanism, epsilon, delta, rng, len(data), on_out_of_bounds, **params)
    warn_extra_columns(data.columns, schema, "the input table")
    chunk = plan.record_map.encode(data)
    private_warnings = warn_data(plan, len(data), chunk.clip_counts, class_counts(plan, chunk.X, chunk.y))
    mech = plan.mechanism
    m = n_draw(mech, n_synthetic, plan.n)
    with ledger_charge(ledger, dataset_id, budget, plan), release_threads():
        mech.fit(chunk.X, chunk.y)
        if isinstance(mech, RowAlignedMechanism):
            out = decode_output(mech, mech.transform(chunk.X), None, plan.encoder, None)
        else:
            Xs, ys = mech.sample(m)
            out = decode_output(mech, Xs, ys, plan.encoder, plan.label_encoder)
    out_hash = frame_sha256(out)  # a table held in memory, identified as its input is (a file: its bytes)
    cert = make_certificate(plan, len(out), list(out.columns), out_hash)
    input_hash = frame_sha256(data[schema.names])
    return ReleaseResult(data=out, certificate=cert, mechanism=mech,
                         private_diagnostics=make_diagnostics(plan, chunk.clip_counts, input_hash, private_warnings))


# ---- file release ----------------------------------------------------------------------

@dataclass
class Fitted:
    """What a fitting strategy leaves: the records seen, their clip counts, the matrix if held in memory."""

    n: int
    clip_counts: dict
    X: np.ndarray | None = None
    class_counts: np.ndarray | None = None  # records per label class (for the one-class warning)


def class_counts(plan: Plan, X: np.ndarray, y: np.ndarray | None) -> np.ndarray | None:
    """Records per level of the schema's label: from its one-hot block in X, or from class codes y."""
    label = plan.schema.label
    if label is None:
        return None
    block = plan.encoder.slices.get(label.name)
    if block is not None:
        return X[:, block].sum(axis=0)
    lab = plan.label_encoder
    if y is not None and lab is not None and lab.columns[0].name == label.name:
        return np.bincount(np.asarray(y, dtype=np.int64), minlength=label.width)
    return None


def warn_data(plan: Plan, n: int, clip_counts: dict, label_counts) -> list[str]:
    """The data warnings of a release, once, from totals over the whole table: clipped columns
    (named, without their counts) and a label holding a single class. Each is present because of
    single records, so each is private: returned for the private diagnostics."""
    from ..schema.encoding import warn_one_class

    msgs = plan.encoder.warn_clipped(clip_counts, n)
    if label_counts is not None:
        msgs += warn_one_class(plan.schema.label, label_counts, n)
    return msgs


def release_file(
    input_path: str | Path,
    schema: Schema,
    out_path: str | Path,
    mechanism: str = DEFAULT_MECHANISM,
    epsilon: float | None = None,
    *,
    delta: float | None = None,
    rng=None,
    on_out_of_bounds: str = "clip",
    n_synthetic: int | None = None,
    certificate_path: str | Path | None = None,
    ledger=None,
    dataset_id: str | None = None,
    budget=None,
    chunk_rows: int = 200_000,
    progress: Progress | Callable[[str, int], None] | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
    overwrite: bool = False,
    sep: str | None = None,
    encoding: str | None = None,
    **params,
) -> Certificate:
    """Release a CSV/Parquet file into ``out_path``, streaming it in chunks; one transaction.

    The table, the certificate (``certificate_path``), the private diagnostics beside it
    (``NAME.private-diagnostics.json``) and the ledger charge all succeed or none does.
    Every output is checked before the data are read: none may be an input, an existing
    one needs ``overwrite=True``, its folder must be writable.

    ``input_path`` is a CSV/Parquet file, a directory of them or a glob pattern.
    ``engine="dask"`` runs the mechanism's passes on Dask partitions: each partition is
    encoded and mapped (the same per-record map as the local engine) where it lives and only
    the merged statistics come back; ``scheduler`` names an existing ``dask.distributed``
    cluster, ``workers`` starts a local cluster of that many processes for the release.
    ``progress`` is a callable ``(stage, rows)``, or a :class:`~privrelease.release.progress.Progress`,
    which is also told the number of records before the first pass.
    ``sep`` and ``encoding`` read a CSV input (default: the delimiter sniffed from its first lines, UTF-8).
    Other parameters as in :func:`release`. The release's own options become one
    :class:`~privrelease.release.options.ReleaseOptions` (:func:`run_release` takes that value).
    """
    options = ReleaseOptions(delta=delta, rng=rng, on_out_of_bounds=on_out_of_bounds, n_synthetic=n_synthetic,
                             certificate_path=certificate_path, ledger=ledger, dataset_id=dataset_id, budget=budget,
                             chunk_rows=chunk_rows, engine=engine, scheduler=scheduler, workers=workers,
                             overwrite=overwrite, sep=sep, encoding=encoding)
    return run_release(input_path, schema, out_path, mechanism, epsilon, options=options, params=params,
                       progress=progress)


def run_release(input_path: str | Path, schema: Schema, out_path: str | Path, mechanism: str, epsilon: float | None,
                *, options: ReleaseOptions, params: dict, progress=None) -> Certificate:
    """:func:`release_file` with the release's own options as one value and the mechanism's parameters
    (``params``) apart."""
    o = options
    out_path, progress = Path(out_path), as_progress(progress)
    source = _check_file_args(input_path, out_path, schema, o.chunk_rows, o.engine, o.scheduler, o.workers)
    source.sep, source.encoding = o.sep, o.encoding
    check_ledger_args(o.ledger, o.dataset_id, o.budget)
    n = source.count_rows()  # the public n (also checks that the input can be read)
    warn_extra_columns(table_columns(source.paths[0], o.sep, o.encoding), schema, str(input_path))
    if progress is not None:
        progress.start(n)
    plan = construct(schema, mechanism, epsilon, o.delta, o.rng, n, o.on_out_of_bounds, **params)
    strategy = pick_strategy(plan.mechanism, o.engine)
    m = n_draw(plan.mechanism, o.n_synthetic, n)
    targets, dirs = _targets(out_path, o.certificate_path)
    with Transaction(source.paths, targets, o.overwrite, private=("diagnostics",), directories=dirs) as tx, \
            dask_client(o.scheduler, o.workers) if o.engine == "dask" else _no_client() as client:
        with ledger_charge(o.ledger, o.dataset_id, o.budget, plan, released=lambda: tx.moving), release_threads():
            cert = _fit_and_write(plan, source, _Engine(o.engine, client), strategy, m, tx, out_path, progress)
            tx.commit()
    return cert


def _targets(out_path: Path, certificate_path) -> tuple[dict, tuple]:
    """The outputs of a file release by role, and the roles that are directories (a Parquet dataset)."""
    targets = {"table": out_path}
    if certificate_path is not None:
        targets.update(certificate=Path(certificate_path), diagnostics=diagnostics_path(certificate_path))
    return targets, ("table",) if is_dataset(out_path) else ()


def _fit_and_write(plan: Plan, source: FileSource, eng, strategy: str, m: int, tx: Transaction, out_path: Path,
                   progress: Progress | None) -> Certificate:
    """Inside the transaction: fit with ``strategy``, write the table (and the certificate and private
    diagnostics when the transaction has them) to their temporary places; return the certificate."""
    fitted = STRATEGIES[strategy](plan, source, eng, progress)
    if fitted.n != plan.n:
        raise InputDataError(f"the input changed during the release ({plan.n} then {fitted.n} records)")
    private_warnings = warn_data(plan, fitted.n, fitted.clip_counts, fitted.class_counts)
    n_out, cols, out_hash = write_table_output(plan, fitted, source, eng, m, tx.temp("table"), out_path, progress)
    cert = make_certificate(plan, n_out, cols, out_hash)
    if "certificate" in tx.targets:
        tx.write_text("certificate", cert.to_json())
        tx.write_text("diagnostics", make_diagnostics(plan, fitted.clip_counts, source.sha256(),
                                                         private_warnings).to_json())
    return cert


def _check_file_args(input_path, out_path: Path, schema, chunk_rows, engine, scheduler, workers) -> FileSource:
    check_engine(engine, scheduler, workers)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ParameterError(f"{option('chunk_rows', '--chunk-rows')} must be an integer >= 1, got {chunk_rows!r}")
    check_output(out_path)
    return FileSource(resolve_inputs(input_path), schema, int(chunk_rows))


@contextlib.contextmanager
def _no_client():
    yield None


@dataclass(frozen=True)
class _Engine:
    """The engine a strategy runs its passes on (a distributed client, or None for Dask's default)."""

    name: str
    client: object = None

    def passes(self, plan: Plan, source: FileSource) -> DaskPasses:
        return DaskPasses(source.dask_partitions(), plan.record_map, client=self.client)

    def compute(self, obj):
        return DaskPasses([], None, client=self.client).compute(obj)

    def iter_compute(self, tasks: list):
        """Results of delayed ``tasks`` in order (computed in parallel on a cluster, gathered one by one)."""
        if self.client is None:
            for t in tasks:
                yield self.compute(t)
            return
        futures = self.client.compute(tasks)
        for i, fut in enumerate(futures):
            yield fut.result()
            futures[i] = None  # let the cluster forget a part once it is written


def pick_strategy(mech, engine: str) -> str:
    """The fitting strategy from the mechanism's declared passes and the engine."""
    passes = mech.release_passes()
    if engine == "local":
        return passes
    if passes in ("statistics", "multi-pass"):  # each pass's map runs on the partitions
        return passes
    raise ParameterError(f"mechanism '{mech.name}' (with these parameters) fits on the records themselves, which "
                         f"the dask engine does not distribute; use --engine local")


def _fit_memory(plan: Plan, source: FileSource, engine, progress) -> Fitted:
    frames, rows = [], 0
    for df in source.chunks():
        frames.append(df)
        rows += len(df)
        if progress:
            progress("reading", rows)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=plan.schema.names)
    chunk = plan.record_map.encode(df)
    plan.mechanism.fit(chunk.X, chunk.y)
    return Fitted(len(df), chunk.clip_counts, chunk.X, class_counts(plan, chunk.X, chunk.y))


def _fit_statistics(plan: Plan, source: FileSource, engine, progress) -> Fitted:
    if engine.name == "dask":
        stats = engine.passes(plan, source).map_frames(plan.record_map.stats, SufficientStats.merge)
        stats = stats if stats is not None else plan.record_map.empty()
    else:
        stats = stream_stats(source.chunks(), plan.record_map,
                             progress=(lambda k: progress("statistics", k)) if progress else None)
    plan.mechanism.fit_stats(stats)
    return Fitted(stats.n, stats.clip_counts, class_counts=_stats_class_counts(plan, stats))


def _stats_class_counts(plan: Plan, stats) -> np.ndarray | None:
    """Which label classes occur, from merged statistics (per-class records, or the label block's sums)."""
    label = plan.schema.label
    if label is None:
        return None
    block = plan.encoder.slices.get(label.name)
    if block is not None:
        return np.asarray(stats.s1)[block]
    if stats.classes:
        return np.array([stats.classes[k].n if k in stats.classes else 0 for k in range(label.width)])
    return None


def _encoded_passes(plan: Plan, source: FileSource, progress, labels: bool):
    """A callable giving a fresh pass of encoded chunks (``(X, y)`` pairs, or X alone), and the
    (records, clip counts) of each completed pass."""
    passes: list[tuple[int, dict, np.ndarray | None]] = []

    def make_chunks():
        counts: dict = {}
        per_class = None
        offset = 0
        for df in source.chunks():
            chunk = plan.record_map.encode(df, offset)
            offset += len(df)
            for k, v in chunk.clip_counts.items():
                counts[k] = counts.get(k, 0) + v
            c = class_counts(plan, chunk.X, chunk.y)
            per_class = c if per_class is None else (per_class + c if c is not None else per_class)
            if progress:
                progress(f"pass {len(passes) + 1}", offset)
            yield (chunk.X, chunk.y) if labels else chunk.X
        passes.append((offset, counts, per_class))

    return make_chunks, passes


def _fit_multi_pass(plan: Plan, source: FileSource, engine, progress) -> Fitted:
    if engine.name == "dask":
        executor = engine.passes(plan, source)
        plan.mechanism.fit_executor(executor)
        return Fitted(*executor.passes[0])  # every pass re-counts the same clips: report the first
    make_chunks, passes = _encoded_passes(plan, source, progress, labels=True)
    plan.mechanism.fit_passes(make_chunks)
    n, clips, per_class = passes[0]  # every pass re-counts the same clips: report the first
    return Fitted(n, clips, class_counts=per_class)


def _fit_stream(plan: Plan, source: FileSource, engine, progress) -> Fitted:
    make_chunks, passes = _encoded_passes(plan, source, progress, labels=False)
    plan.mechanism.fit_stream(make_chunks)
    n, clips, per_class = passes[0]
    return Fitted(n, clips, class_counts=per_class)


STRATEGIES = {"memory": _fit_memory, "statistics": _fit_statistics, "multi-pass": _fit_multi_pass,
              "stream": _fit_stream}
