"""The release workflow: schema -> encoding -> mechanism -> decoding -> certificate.

:func:`release` works on an in-memory DataFrame; :func:`release_file` streams a
CSV/Parquet file in chunks (two passes for moment-based row-aligned mechanisms), so
files larger than memory can be released. Both record a spend in an optional
:class:`~privrelease.accounting.ledger.Ledger` *before* any output is written and
cancel it if the release fails before its output exists (see the ledger's docs).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import inspect
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ._version import __version__
from .engine import stream_stats
from .errors import InputDataError, ParameterError, SchemaError
from .io import atomic_write, file_sha256, iter_table_chunks, table_format, warn_extra_columns
from .mechanisms import Mechanism, RowAlignedMechanism, SyntheticMechanism, get_mechanism
from .mechanisms.privacy import check_delta, check_epsilon
from .noise import make_source
from .schema import Encoder, Schema

DEFAULT_MECHANISM = "gauss-pca"
MIN_RECORDS = 2


@dataclass
class Certificate:
    """What was released, how, and with which privacy guarantee."""

    mechanism: str
    guarantee: str
    neighbouring_relation: str
    epsilon: float | None
    delta: float | None
    parameters: dict
    budget_split: dict
    sensitivities: dict
    noise_scales: dict
    n_treated_as_public: bool
    clip_counts: dict
    randomness: str
    package_version: str
    n_input_records: int
    n_output_records: int
    output_kind: str
    output_columns: list
    input_sha256: str | None = None
    output_sha256: str | None = None
    schema_sha256: str | None = None
    created_utc: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    notes: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {k: _jsonable(v) for k, v in self.__dict__.items()}
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)


@dataclass
class ReleaseResult:
    """A released table (in the schema's columns, or the reduced space where stated) and its certificate."""

    data: pd.DataFrame | None
    certificate: Certificate
    mechanism: Mechanism


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else str(f)
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if v is None or isinstance(v, (str, int, bool)):
        return v
    return str(v)


# ---- building the mechanism ----------------------------------------------------

def build_mechanism(name: str, epsilon, delta=None, rng=None, domain=None, **params) -> Mechanism:
    """Instantiate a registered mechanism, refusing unknown parameters with the valid list."""
    cls = get_mechanism(name)
    sig = inspect.signature(cls.__init__)
    accepted = [p for p in sig.parameters if p != "self"]
    kwargs = dict(params)
    if "epsilon" in accepted:
        kwargs["epsilon"] = check_epsilon(epsilon)
    elif epsilon is not None:
        raise ParameterError(f"mechanism '{name}' takes no epsilon (its guarantee is {cls.guarantee})")
    if "delta" in accepted and delta is not None:
        kwargs["delta"] = check_delta(delta)
    elif delta is not None and "delta" not in accepted:
        raise ParameterError(f"mechanism '{name}' takes no delta (it is {cls.guarantee})")
    if "rng" in accepted:
        kwargs["rng"] = rng
    if "domain" in accepted:
        kwargs["domain"] = domain
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        user = [p for p in accepted if p not in ("rng", "domain", "epsilon", "delta")]
        raise ParameterError(f"mechanism '{name}' has no parameter(s) {unknown}; its parameters: {user}")
    return cls(**kwargs)


def _user_params(mech: Mechanism) -> dict:
    return {k: v for k, v in mech.get_params(deep=False).items() if k not in ("rng", "domain")}


def _prepare(schema: Schema, mech_cls) -> tuple[Encoder, Encoder | None]:
    """Feature encoder and (for supervised mechanisms) label encoder."""
    if not isinstance(schema, Schema):
        raise SchemaError(f"schema must be a privrelease.Schema, got {type(schema).__name__}")
    if getattr(mech_cls, "needs_target", False):
        target = schema.target
        if target is None:
            raise SchemaError(f"mechanism '{mech_cls.name}' needs a regression target: mark a numeric column "
                              f"with 'role: target'")
        feats = [c.name for c in schema.columns if c.name != target.name]
        if not feats:
            raise SchemaError("the schema has no feature columns besides the target")
        return Encoder(schema, feats), Encoder(schema, [target.name])
    if mech_cls.supervised or (getattr(mech_cls, "uses_label", False) and schema.label is not None):
        label = schema.label
        if label is None:
            raise SchemaError(f"mechanism '{mech_cls.name}' needs a label column: mark one with 'role: label'")
        feats = [c.name for c in schema.columns if c.name != label.name]
        if not feats:
            raise SchemaError("the schema has no feature columns besides the label")
        return Encoder(schema, feats), Encoder(schema, [label.name])
    return Encoder(schema), None


def _encode_y(lab: Encoder | None, df: pd.DataFrame, warn: bool = True):
    """Class codes of the label column, or the encoded value in [0, 1] of a regression target."""
    if lab is None:
        return None
    X = lab.encode(df, warn=warn).X
    return X[:, 0] if lab.columns[0].kind == "numeric" else X.argmax(axis=1)


def _label_params(mech_name: str, lab: Encoder | None, params: dict) -> dict:
    """Pass the public label-set size to mechanisms that take ``n_classes`` (unless given)."""
    if lab is None or lab.columns[0].kind != "categorical" or "n_classes" in params:
        return params
    sig = inspect.signature(get_mechanism(mech_name).__init__)
    if "n_classes" in sig.parameters:
        params = dict(params, n_classes=len(lab.columns[0].categories))
    return params


def _public_table_params(params: dict, enc: Encoder, schema: Schema) -> dict:
    """A public table given as ``public_data`` (a CSV/Parquet path or a DataFrame in the schema's own
    columns) is encoded with the release's encoder (clipped to the declared bounds), so mechanisms
    that derive a basis from public records receive the encoded matrix. Public input: no budget."""
    value = params.get("public_data")
    if value is None or isinstance(value, np.ndarray):
        return params
    if isinstance(value, (str, Path)):
        from .io import read_table

        path = Path(value)
        if not path.exists():
            raise InputDataError(f"public data file {path} does not exist")
        value = read_table(path, schema)
    if isinstance(value, pd.DataFrame):
        return dict(params, public_data=enc.encode(value, on_out_of_bounds="clip").X)
    return params


def _schema_params(mech_cls, schema: Schema, enc, lab, params: dict) -> dict:
    """Parameters a mechanism derives from the public schema (never read from data); explicit
    parameters win. A mechanism with a ``schema_params(encoder, label_encoder)`` hook gets
    what the hook returns (e.g. the number of label classes, taxonomy trees); otherwise the
    number of label classes and the schema's ``row_norm_bound`` are passed when its
    constructor accepts them."""
    hook = getattr(mech_cls, "schema_params", None)
    if hook is not None:
        return {**hook(enc, lab), **params}
    accepted = inspect.signature(mech_cls.__init__).parameters
    out = dict(params)
    if ("n_classes" in accepted and lab is not None and lab.columns[0].kind == "categorical"
            and "n_classes" not in out):
        out["n_classes"] = len(lab.columns[0].categories)
    if "row_norm_bound" in accepted and schema.row_norm_bound is not None and "row_norm_bound" not in out:
        out["row_norm_bound"] = float(schema.row_norm_bound)
    return out


def _check_n(n: int, p: int, mech: Mechanism):
    if n == 0:
        raise InputDataError("the input has no records")
    if n < MIN_RECORDS:
        raise InputDataError(f"the input has {n} record; a release needs at least {MIN_RECORDS}")
    if getattr(mech, "needs_stats", False) or mech.output_kind != "row-aligned":
        if n <= p:
            raise InputDataError(
                f"the input has n = {n} records but the encoded table has p = {p} columns; "
                f"mechanism '{mech.name}' estimates a p x p covariance and needs n > p"
            )


# ---- in-memory release ------------------------------------------------------------

def release(
    data: pd.DataFrame,
    schema: Schema,
    mechanism: str = DEFAULT_MECHANISM,
    epsilon: float | None = 1.0,
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
    epsilon, delta : privacy parameters (delta only for (epsilon, delta)-DP mechanisms)
    rng : None for a real release (floating-point-safe noise from OS entropy); an int
        seed or a numpy Generator for reproducible experiments (certificate says so)
    on_out_of_bounds : "clip" (default; counted in the certificate) or "error"
    n_synthetic : number of synthetic records (synthetic mechanisms; default n)
    ledger, dataset_id, budget : optional persistent budget accounting
    **params : mechanism parameters (e.g. ``n_components=5``)

    Returns
    -------
    ReleaseResult with ``.data`` (DataFrame) and ``.certificate``.
    """
    if not isinstance(data, pd.DataFrame):
        raise InputDataError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    mech_cls = get_mechanism(mechanism)
    enc, lab = _prepare(schema, mech_cls)
    params = _schema_params(mech_cls, schema, enc, lab, params)
    warn_extra_columns(data.columns, schema, "the input table")
    encoded = enc.encode(data, on_out_of_bounds=on_out_of_bounds)
    y = _encode_y(lab, data)
    params = _public_table_params(params, enc, schema)
    mech = build_mechanism(mechanism, epsilon, delta, rng, enc.domain, **_label_params(mechanism, lab, params))
    _check_n(len(data), enc.width, mech)
    input_hash = hashlib.sha256(data[schema.names].to_csv(index=False).encode()).hexdigest()

    def run():
        mech.fit(encoded.X, y)
        return _output_frame(mech, encoded.X, enc, lab, n_synthetic, len(data))

    out = _with_ledger(ledger, dataset_id, budget, mech, run)
    out_hash = hashlib.sha256(out.to_csv(index=False).encode()).hexdigest()
    cert = _certificate(mech, schema, encoded.clip_counts, len(data), out, input_hash, out_hash)
    return ReleaseResult(data=out, certificate=cert, mechanism=mech)


def _output_frame(mech, X, enc, lab, n_synthetic, n):
    if isinstance(mech, RowAlignedMechanism):
        return enc.decode(mech.transform(X))
    if isinstance(mech, SyntheticMechanism):
        Xs, ys = mech.sample(_n_draw(mech, n_synthetic, n))
        return _decode_synthetic(mech, Xs, ys, enc, lab)
    raise ParameterError(f"mechanism '{mech.name}' has an unknown output kind")


def _n_draw(mech, n_synthetic, n):
    """Records to draw from a synthetic mechanism (None when its output size is one of its parameters)."""
    if getattr(mech, "fixed_output_rows", False):
        if n_synthetic is not None:
            raise ParameterError(f"mechanism '{mech.name}' releases a number of rows fixed by its parameters; "
                                 f"n_synthetic does not apply")
        return None
    return n if n_synthetic is None else Mechanism._check_int(n_synthetic, "n_synthetic", 1)


def _decode_synthetic(mech, Xs, ys, enc, lab):
    """Decode a synthetic sample; reduced-space outputs keep their own column names."""
    if getattr(mech, "output_space", None) == "encoded":  # e.g. compression: encoded columns, not decodable
        mech.output_columns_ = list(enc.feature_names)
        out = pd.DataFrame(np.asarray(Xs), columns=mech.output_columns_)
    elif getattr(mech, "output_columns_", None) is not None:
        out = pd.DataFrame(np.asarray(Xs), columns=list(mech.output_columns_))
    else:
        out = enc.decode(Xs)
    if lab is not None and ys is not None:
        col = lab.columns[0]
        if col.kind == "numeric":
            out[col.name] = lab.decode(np.asarray(ys, dtype=np.float64).reshape(-1, 1))[col.name].to_numpy()
        else:
            out[col.name] = np.asarray(col.categories, dtype=object)[np.asarray(ys, dtype=int)]
    return out


def _with_ledger(ledger, dataset_id, budget, mech, run: Callable):
    """Run ``run`` under a ledger reservation when a ledger is given."""
    if ledger is None:
        return run()
    from .accounting.ledger import Ledger

    if not isinstance(ledger, Ledger):
        ledger = Ledger(ledger)
    if not dataset_id:
        raise ParameterError("a ledger needs a dataset id (--dataset-id)")
    cost = _declared_cost(mech)
    with ledger.reserve(dataset_id, cost, budget=budget, mechanism=mech.name, details=_user_params(mech)):
        return run()


def _declared_cost(mech: Mechanism):
    """The cost a mechanism will spend, known before it touches the data."""
    from .mechanisms.privacy import PrivacyCost

    eps = getattr(mech, "epsilon", None)
    if eps is None or not math.isfinite(float(eps)):
        raise ParameterError("a ledger can only record finite-epsilon releases")
    return PrivacyCost(float(eps), float(getattr(mech, "delta", 0.0) or 0.0))


def _certificate(mech, schema, clip_counts, n_in, out, input_hash, out_hash) -> Certificate:
    cost = getattr(mech, "privacy_cost_", None)
    notes = list(getattr(mech, "notes_", []))
    src = getattr(mech, "source_", None)
    randomness = src.description if src is not None else make_source(None).description
    if src is not None and not src.secure:
        notes.append("seeded randomness: reproducible, not for real releases")
    extra = mech.certificate_extra()
    return Certificate(
        mechanism=mech.name,
        guarantee=mech.guarantee if mech.is_private else "none (epsilon = inf: no noise)",
        neighbouring_relation=mech.relation,
        epsilon=None if cost is None else cost.epsilon,
        delta=None if cost is None else cost.delta,
        parameters=_user_params(mech),
        budget_split=dict(getattr(mech, "budget_split_", {})),
        sensitivities=dict(getattr(mech, "sensitivities_", {})),
        noise_scales=dict(getattr(mech, "noise_scales_", {})),
        n_treated_as_public=bool(schema.n_public),
        clip_counts=dict(clip_counts),
        randomness=randomness,
        package_version=__version__,
        n_input_records=int(n_in),
        n_output_records=int(len(out)) if out is not None else 0,
        output_kind=mech.output_kind,
        output_columns=list(out.columns) if out is not None else [],
        input_sha256=input_hash,
        output_sha256=out_hash,
        schema_sha256=hashlib.sha256(schema.to_yaml().encode()).hexdigest(),
        notes=notes,
        extra=extra,
    )


# ---- file release (streaming) ----------------------------------------------------------

def release_file(
    input_path: str | Path,
    schema: Schema,
    out_path: str | Path,
    mechanism: str = DEFAULT_MECHANISM,
    epsilon: float | None = 1.0,
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
    progress: Callable[[str, int], None] | None = None,
    engine: str = "local",
    **params,
) -> Certificate:
    """Release a CSV/Parquet file into ``out_path`` (atomic), streaming it in chunks.

    Row-aligned moment-based mechanisms read the file twice (statistics, then
    projection); synthetic mechanisms with ``fit_stats`` read it once; others read it
    into memory. Nothing is written unless the whole release succeeds.
    ``engine="dask"`` computes the statistics pass with Dask (partitions reduced
    where they live, see :mod:`privrelease.engine.distributed`).
    """
    if engine not in ("local", "dask"):
        raise ParameterError(f"engine must be 'local' or 'dask', got {engine!r}")
    input_path, out_path = Path(input_path), Path(out_path)
    table_format(out_path)  # fail early on an unsupported output type
    mech_cls = get_mechanism(mechanism)
    enc, lab = _prepare(schema, mech_cls)
    params = _schema_params(mech_cls, schema, enc, lab, params)
    params = _public_table_params(params, enc, schema)
    mech = build_mechanism(mechanism, epsilon, delta, rng, enc.domain, **_label_params(mechanism, lab, params))
    if not input_path.exists():
        raise InputDataError(f"input file {input_path} does not exist")
    if input_path.stat().st_size == 0:
        raise InputDataError(f"input file {input_path} is empty (no header, no records)")
    clip_counts: dict[str, int] = {}
    n_classes = len(lab.columns[0].categories) if lab is not None and lab.columns[0].kind == "categorical" else None

    def chunks():
        return iter_table_chunks(input_path, schema, chunk_rows)

    # records per label class (over all passes), for the one-class warning; the label is either
    # encoded with the features (unsupervised mechanisms) or apart (supervised ones)
    label_col = schema.label
    label_block = enc.slices.get(label_col.name) if label_col is not None else None
    class_counts = np.zeros(label_col.width if label_col is not None else 0)

    def encode(df, offset):
        e = enc.encode(df, on_out_of_bounds=on_out_of_bounds, row_offset=offset, warn=False)
        for k, v in e.clip_counts.items():
            clip_counts[k] = clip_counts.get(k, 0) + v
        if label_block is not None:
            class_counts[:] += e.X[:, label_block].sum(axis=0)
        return e.X

    def labels(df):
        y = _encode_y(lab, df, warn=False)
        if n_classes and label_block is None:
            np.add.at(class_counts, y, 1)
        return y

    streaming = (hasattr(mech, "fit_stats") and type(mech).fit_stats is not RowAlignedMechanism.fit_stats
                 and getattr(mech, "can_stream", True))
    fmt = table_format(out_path)

    # mechanisms that make several passes themselves (gauss-pca: centre, then clipped moments);
    # with engine="dask" they fall back to their one-pass fit_stats on raw statistics
    multi_pass = getattr(mech, "multi_pass", False) and hasattr(mech, "fit_passes") and engine == "local"
    streaming = streaming and not multi_pass

    def run():
        if hasattr(mech, "fit_stream"):  # multi-pass streaming of encoded chunks (e.g. compression)
            first_pass: list[dict] = []

            def encoded_chunks():
                offset = 0
                for df in chunks():
                    yield encode(df, offset)
                    offset += len(df)
                if not first_pass:
                    first_pass.append(dict(clip_counts))

            mech.fit_stream(encoded_chunks)
            clip_counts.clear()
            clip_counts.update(first_pass[0] if first_pass else {})  # later passes re-count the same clips
            n_in = mech.n_
            _check_n(n_in, enc.width, mech)
            Xs, ys = mech.sample(_n_draw(mech, n_synthetic, n_in))
            n_out = _write_chunks(iter([_decode_synthetic(mech, Xs, ys, enc, lab)]), out_path, fmt, progress)
            return n_in, n_out
        if multi_pass:
            # the mechanism makes its own passes over fresh chunk iterators (memory flat in n)
            counter = {"n": 0, "pass": 0}

            def make_chunks():
                counter["pass"] += 1
                counter["n"] = 0
                for df in chunks():
                    X = encode(df, counter["n"])
                    counter["n"] += len(df)
                    if progress:
                        progress(f"pass {counter['pass']}", counter["n"])
                    yield X, (labels(df) if lab is not None else None)

            mech.fit_passes(make_chunks)
            n_in = counter["n"]
            _check_n(n_in, enc.width, mech)
            clip_counts_pass = dict(clip_counts)
            for k in clip_counts_pass:  # every pass re-counts the same clips
                clip_counts[k] = clip_counts_pass[k] // max(counter["pass"], 1)
        if streaming and engine == "dask":
            stats = _dask_file_stats(input_path, schema, enc, lab, n_classes, on_out_of_bounds)
        if streaming and engine == "local":
            stats = stream_stats(chunks(), encode, enc.width, labels if lab is not None else None, n_classes,
                                 progress=(lambda k: progress("statistics", k)) if progress else None)
        if multi_pass:
            pass
        elif streaming:
            _check_n(stats.n, enc.width, mech)
            mech.fit_stats(stats)
            n_in = stats.n
        else:
            frames = list(chunks())
            df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=schema.names)
            X = encode(df, 0)
            y = labels(df) if lab is not None else None
            _check_n(len(df), enc.width, mech)
            mech.fit(X, y)
            n_in = len(df)
        if isinstance(mech, RowAlignedMechanism):
            row_iter = (
                enc.decode(mech.transform(encode(df, 0) if streaming else X_part))
                for df, X_part in _row_chunks(streaming, chunks, X if not streaming else None, chunk_rows)
            )
            clip_before = dict(clip_counts)
            n_out = _write_chunks(row_iter, out_path, fmt, progress)
            if streaming and engine == "local":
                clip_counts.clear()
                clip_counts.update(clip_before)  # the second pass re-counts the same clips
        else:
            m = _n_draw(mech, n_synthetic, n_in)
            n_out = _write_chunks(_synthetic_frames(mech, m, enc, lab, chunk_rows), out_path, fmt, progress)
        return n_in, n_out

    n_in, n_out = _with_ledger(ledger, dataset_id, budget, mech, run)
    _warn_totals(enc, schema, clip_counts, n_in, class_counts)
    # certificate (the output's column names only: never read the whole output back)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        out_cols = list(pq.read_schema(out_path).names)
    else:
        out_cols = list(pd.read_csv(out_path, nrows=0).columns)
    cert = _certificate(mech, schema, clip_counts, n_in, pd.DataFrame(columns=out_cols), file_sha256(input_path),
                        file_sha256(out_path))
    cert.n_output_records = int(n_out)
    if certificate_path is not None:
        with atomic_write(certificate_path, "w") as fh:
            fh.write(cert.to_json())
    return cert


def _warn_totals(enc: Encoder, schema: Schema, clip_counts: dict, n_in: int, class_counts) -> None:
    """The data warnings of a chunked release, once, from the totals over the whole file."""
    from .schema.encoding import warn_one_class

    enc.warn_clipped(clip_counts, n_in)
    if len(class_counts):
        # several passes count each record several times: only which classes occur matters here
        warn_one_class(schema.label, class_counts, n_in)


def _dask_file_stats(path, schema, enc, lab, n_classes, on_out_of_bounds):
    import dask.dataframe as dd

    from .engine.distributed import dask_stats
    from .io.tables import _csv_dtypes

    if table_format(path) == "csv":
        ddf = dd.read_csv(str(path), dtype=_csv_dtypes(schema), skipinitialspace=True, blocksize="64MB"
                          if not str(path).endswith(".gz") else None)
    else:
        ddf = dd.read_parquet(str(path), columns=schema.names)

    def encode(df, offset):
        return enc.encode(df, on_out_of_bounds=on_out_of_bounds).X

    labels = (lambda df: lab.encode(df).X.argmax(axis=1)) if lab is not None else None
    # clip counts are not gathered from the workers; the local projection pass counts them
    return dask_stats(ddf, encode, enc.width, labels, n_classes)


def _row_chunks(streaming, chunks, X, chunk_rows):
    if streaming:
        for df in chunks():
            yield df, None
    else:
        for start in range(0, X.shape[0], chunk_rows):
            yield None, X[start:start + chunk_rows]


def _synthetic_frames(mech, m: int, enc, lab, chunk_rows: int):
    """Decoded synthetic records, ``chunk_rows`` at a time when the mechanism allows it.

    Mechanisms whose ``sample`` draws i.i.d. records from a fixed fitted model declare
    ``samples_in_chunks = True``; their output memory then does not grow with ``m``.
    Others (e.g. a posterior draw per ``sample`` call) are sampled in one call.
    """
    if m is None or not getattr(mech, "samples_in_chunks", False):  # m None: size fixed by the mechanism
        Xs, ys = mech.sample(m)
        yield _decode_synthetic(mech, Xs, ys, enc, lab)
        return
    step = max(int(chunk_rows), 1)
    done = 0
    while done < m:
        k = min(step, m - done)
        Xs, ys = mech.sample(k)
        yield _decode_synthetic(mech, Xs, ys, enc, lab)
        done += k


def _write_chunks(frames, out_path: Path, fmt: str, progress=None) -> int:
    """Write an iterator of DataFrames to one file atomically; return the row count."""
    n = 0
    with atomic_write(out_path, "wb") as fh:
        if fmt == "csv":
            import gzip

            sink = gzip.GzipFile(fileobj=fh, mode="wb") if str(out_path).lower().endswith(".gz") else fh
            first = True
            for df in frames:
                buf = io.StringIO()
                df.to_csv(buf, index=False, header=first)
                sink.write(buf.getvalue().encode())
                first = False
                n += len(df)
                if progress:
                    progress("writing", n)
            if sink is not fh:
                sink.close()
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            writer = None
            for df in frames:
                table = pa.Table.from_pandas(df, preserve_index=False)
                if writer is None:
                    writer = pq.ParquetWriter(fh, table.schema)
                writer.write_table(table)
                n += len(df)
                if progress:
                    progress("writing", n)
            if writer is not None:
                writer.close()
    return n
