"""Table <-> matrix encoding in the schema's declared bounds.

Numeric columns map to ``(v - lower) / (upper - lower)`` in [0, 1]; categorical
columns to one-hot dummy blocks (Jiang et al. 2013, sec. 3.1). A numeric column that
declares ``missing: allowed`` encodes a missing value as NaN in its coordinate. Decoding
is post-processing: numeric values are clipped to [0, 1], mapped back with the public
bounds and snapped to the column's public precision (:mod:`.precision`; NaN comes back
as a missing value where the column allows them); dates come back as ISO text; each
categorical block becomes the level of its largest entry (argmax, as in Jiang sec. 3.1).

Validation refuses, with a message naming the column, every input that would
otherwise be silently altered: missing values (unless the schema allows them),
unknown categories, non-numeric text in a numeric column, dates in a column not
declared ``type: datetime``, and - with ``on_out_of_bounds="error"`` - values outside
the declared bounds. By default out-of-bounds values are clipped and counted; the counts
go into the private diagnostics and a :class:`~privrelease.errors.PrivateDataWarning` names
each clipped column, without its count. A label column holding a single class is warned
about too. Both warnings exist because of single records, so their text says that they are
private and a release keeps them in its private diagnostics.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import PRIVATE_PREFIX, InputDataError, PrivateDataWarning, SchemaError, shorten, shorten_list
from .dates import DatetimeColumn
from .precision import is_whole, significant, snap
from .schema import CategoricalColumn, NumericColumn, Schema
from .values import is_na_spelling

OUT_OF_BOUNDS_POLICIES = ("clip", "error")


@dataclass
class EncodedTable:
    """An encoded matrix plus what encoding had to do to the data."""

    X: np.ndarray
    clip_counts: dict[str, int] = field(default_factory=dict)

    @property
    def n_clipped(self) -> int:
        return int(sum(self.clip_counts.values()))


class Encoder:
    """Encodes tables of a :class:`Schema` to ``[0, 1]^p`` matrices and back.

    Parameters
    ----------
    schema : Schema
    columns : optional subset of column names to encode (schema order is kept)

    Examples
    --------
    >>> from privrelease.schema import Schema
    >>> s = Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0, "upper": 10},
    ...                                   "c": {"type": "categorical", "categories": ["a", "b"]}}})
    >>> enc = Encoder(s)
    >>> enc.encode(pd.DataFrame({"x": [5, 12], "c": ["b", "a"]})).X.tolist()
    [[0.5, 0.0, 1.0], [1.0, 1.0, 0.0]]
    >>> enc.decode(np.array([[0.25, 0.9, 0.2]])).to_dict("records")
    [{'x': 2.5, 'c': 'a'}]
    """

    def __init__(self, schema: Schema, columns: list[str] | None = None):
        self.schema = schema if columns is None else schema.select(columns)
        self.columns = self.schema.columns
        self.slices: dict[str, slice] = {}
        start = 0
        for c in self.columns:
            self.slices[c.name] = slice(start, start + c.width)
            start += c.width
        self.width = start
        self.feature_names = []
        for c in self.columns:
            if c.kind == "numeric":
                self.feature_names.append(c.name)
            else:
                self.feature_names.extend(f"{c.name}={v}" for v in c.categories)

    # ---- structure used by sensitivity calculations --------------------
    @property
    def n_numeric(self) -> int:
        """p1: number of numeric columns (each in [0, 1] after encoding)."""
        return sum(1 for c in self.columns if c.kind == "numeric")

    @property
    def n_categorical(self) -> int:
        """p2: number of categorical variables (each a one-hot block)."""
        return sum(1 for c in self.columns if c.kind == "categorical")

    @property
    def numeric_mask(self) -> np.ndarray:
        m = np.zeros(self.width, dtype=bool)
        for c in self.columns:
            if c.kind == "numeric":
                m[self.slices[c.name]] = True
        return m

    @property
    def categorical_blocks(self) -> list[slice]:
        return [self.slices[c.name] for c in self.columns if c.kind == "categorical"]

    # ---- encode --------------------------------------------------------
    def encode(self, df: pd.DataFrame, on_out_of_bounds: str = "clip", row_offset: int = 0,
               warn: bool = True) -> EncodedTable:
        """Encode ``df`` (which must contain every schema column; extra columns are ignored).

        With ``warn=True`` clipped values and a one-class label are reported as
        :class:`~privrelease.errors.PrivateDataWarning`; callers that encode a table in chunks pass
        ``warn=False`` and call :meth:`warn_clipped` once with the totals.
        """
        if on_out_of_bounds not in OUT_OF_BOUNDS_POLICIES:
            raise SchemaError(
                f"on_out_of_bounds must be one of {OUT_OF_BOUNDS_POLICIES}, got {on_out_of_bounds!r}"
            )
        if not isinstance(df, pd.DataFrame):
            raise InputDataError(f"expected a pandas DataFrame, got {type(df).__name__}")
        missing_cols = [c.name for c in self.columns if c.name not in df.columns]
        if missing_cols:
            raise InputDataError(f"the input has no column(s) {missing_cols} declared in the schema")
        n = len(df)
        X = np.zeros((n, self.width), dtype=np.float64)
        clip_counts: dict[str, int] = {}
        undeclared: dict[str, np.ndarray] = {}  # columns with missing values the schema does not allow
        for c in self.columns:
            s = read_missing(df[c.name], self.schema, c)
            if c.kind == "numeric":
                X[:, self.slices[c.name]] = self._encode_numeric(c, s, on_out_of_bounds, clip_counts, row_offset,
                                                                 undeclared)[:, None]
            else:
                X[:, self.slices[c.name]] = self._encode_categorical(c, s, row_offset, undeclared)
        if undeclared:
            label = self.schema.label.name if self.schema.label is not None else None
            raise InputDataError(_undeclared_missing(undeclared, row_offset, label))
        for c in self.columns:
            if warn and c.role == "label":
                warn_one_class(c, X[:, self.slices[c.name]].sum(axis=0))
        if warn:
            self.warn_clipped(clip_counts, n)
        return EncodedTable(X=X, clip_counts=clip_counts)

    def warn_clipped(self, clip_counts: dict, n_rows: int) -> list[str]:
        """One :class:`~privrelease.errors.PrivateDataWarning` per clipped column, naming it and its public
        bounds; returns the messages (for the private diagnostics).

        The warning says only that clipping happened: how many values were clipped is an exact fact
        of the private input, kept in the private diagnostics. That it appears at all depends on single
        records, so it says that it is private.
        """
        split = getattr(self, "constraints", None)  # dates released as their calendar parts: clipped before
        cols = list(self.columns) + [split.schema[n] for n in (split.split_dates if split else ())]
        msgs = [f"values of column '{c.name}' outside the declared bounds {_bounds_text(c)} were clipped to "
                f"them (how many: in the private diagnostics)"
                for c in cols if int(clip_counts.get(c.name, 0))]
        return [warn_private(m) for m in msgs]

    def _encode_numeric(self, c: NumericColumn, s: pd.Series, policy: str, clip_counts: dict, row_offset: int,
                        undeclared: dict):
        v = numeric_values(c, s, row_offset)
        nan = np.isnan(v)
        if nan.any() and c.missing != "allowed":
            undeclared[c.name] = nan
        out = (v < c.lower) | (v > c.upper)
        if out.any():
            if policy == "error":
                raise out_of_bounds_error(c, out, row_offset)
            clip_counts[c.name] = int(out.sum())
            v = np.clip(v, c.lower, c.upper)
        return (v - c.lower) / (c.upper - c.lower)

    def _encode_categorical(self, c: CategoricalColumn, s: pd.Series, row_offset: int, undeclared: dict):
        isna = s.isna().to_numpy()
        if isna.any():
            if c.missing is None:
                undeclared[c.name] = isna
                return np.zeros((len(s), c.width), dtype=np.float64)
            s = s.where(~isna, c.missing)
        text = s.astype(str).to_numpy() if s.dtype == object else _canonical_str(s)
        # each distinct text is stripped and looked up once, the codes mapped back by index
        inverse, uniques = pd.factorize(text)
        u_vals = np.array([str(u).strip() for u in uniques], dtype=object)
        codes = pd.Index(list(c.levels)).get_indexer(u_vals)[inverse]  # an internal missing level reads no value
        if c.missing_as_na:
            codes[isna] = c.width - 1
        unknown = codes < 0
        if unknown.any() and c.other is not None:  # undeclared values go to the declared 'other' level
            codes[unknown] = c.categories.index(c.other)
            unknown[:] = False
        if unknown.any():
            levels = sorted(set(u_vals[inverse[unknown]].tolist()))
            raise InputDataError(
                f"column '{c.name}' has {int(unknown.sum())} value(s) in {len(levels)} categor"
                f"{'y' if len(levels) == 1 else 'ies'} not declared in the schema: {shorten_list(levels)}"
            )
        onehot = np.zeros((len(codes), c.width), dtype=np.float64)
        onehot[np.arange(len(codes)), codes] = 1.0
        return onehot

    @property
    def domain(self) -> "EncodedDomain":
        """The public structure of the encoded matrix (for sensitivity calculations)."""
        return EncodedDomain.from_encoder(self)

    def encode_labels(self, df: pd.DataFrame, name: str | None = None) -> np.ndarray:
        """Integer codes of a categorical column (the label by default)."""
        col = self.schema[name] if name else self.schema.label
        if col is None or col.kind != "categorical":
            raise SchemaError("the schema declares no categorical label column (role: label)")
        sub = Encoder(self.schema, [col.name]).encode(df).X
        return sub.argmax(axis=1)

    # ---- decode --------------------------------------------------------
    def decode(self, X: np.ndarray) -> pd.DataFrame:
        """Map an encoded matrix (possibly noisy) back to a table in the schema's columns."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.width:
            raise InputDataError(f"expected a matrix with {self.width} columns, got shape {X.shape}")
        out = {}
        for c in self.columns:
            block = X[:, self.slices[c.name]]
            if c.kind == "numeric":
                out[c.name] = decode_numeric(c, block[:, 0])
            else:
                codes = np.argmax(np.nan_to_num(block, nan=-np.inf), axis=1)
                values = np.asarray(pd.Categorical.from_codes(codes, categories=list(c.categories)), dtype=object)
                if c.missing_as_na:  # the internal missing level comes back as a missing value
                    values[codes == c.width - 1] = None
                out[c.name] = values
        return pd.DataFrame(out)

    def onehot_to_codes(self, block: np.ndarray) -> np.ndarray:
        return np.argmax(block, axis=1)


def _undeclared_missing(undeclared: dict, row_offset: int, label: str | None = None) -> str:
    """The one-line refusal of every column holding missing values its schema does not allow (the label first)."""
    def where(mask) -> str:
        return f"{int(mask.sum())} missing value(s) (first rows {(np.flatnonzero(mask)[:5] + row_offset).tolist()})"

    undeclared = dict(undeclared)
    said = []
    if label in undeclared:
        said.append(f"label column '{label}' has {where(undeclared.pop(label))}: a release refuses them; drop the "
                    f"records without a label (publicly) first, or name a class for them with 'missing: LEVEL'")
    fix = ("declare 'missing: allowed' for {} in the schema (a numeric column's missing values need a mechanism "
           "that releases them; a categorical column's are released as one more level), or drop or impute them "
           "publicly first")
    if len(undeclared) == 1:
        ((name, mask),) = undeclared.items()
        said.append(f"column '{name}' has {where(mask)}; " + fix.format("it"))
    elif undeclared:
        listed = "; ".join(f"'{name}': {where(mask)}" for name, mask in undeclared.items())
        said.append(f"{len(undeclared)} columns have missing values their schema does not allow ({listed}); "
                    + fix.format("each"))
    return "; and ".join(said)


def decode_numeric(c: NumericColumn, x: np.ndarray):
    """One numeric column's released values from its encoded coordinate: clipped to [0, 1], mapped
    to the public bounds, snapped to the column's precision; NaN is a missing value where the column
    allows them (elsewhere, as always, the middle of the range). Whole-number columns come back as
    int64 (nullable Int64 when they may be missing), dates as ISO text."""
    miss = np.isnan(x) if c.missing == "allowed" else np.zeros(len(x), dtype=bool)
    v = c.lower + np.clip(np.nan_to_num(x, nan=0.5), 0.0, 1.0) * (c.upper - c.lower)
    step = c.resolution
    if step is not None:
        v = snap(v, c.lower, c.upper, step)
    else:
        v = significant(v)  # the encoded scale's last bits: 27.000000000000004 is written 27
    v[miss] = np.nan
    if isinstance(c, DatetimeColumn):
        return c.format_values(v)
    if is_whole(c.lower, c.upper, step):
        if miss.any() or c.missing == "allowed":
            arr = pd.array(np.where(miss, 0, v).astype(np.int64), dtype="Int64")
            arr[miss] = pd.NA
            return arr
        return v.astype(np.int64)
    return v


def numeric_values(c: NumericColumn, s: pd.Series, row_offset: int = 0) -> np.ndarray:
    """A numeric column's values as floats in the units of its bounds (a date column: whole units since
    1970-01-01), NaN where missing; values that are not numbers (or not dates) are refused."""
    return c.to_units(s, row_offset) if isinstance(c, DatetimeColumn) else _numbers(c, s)


def out_of_bounds_error(c: NumericColumn, out: np.ndarray, row_offset: int = 0) -> InputDataError:
    """The one-line refusal of the values of ``c`` outside its declared bounds (``out``: which rows)."""
    rows = (np.flatnonzero(out)[:5] + row_offset).tolist()
    return InputDataError(f"column '{c.name}' has {int(out.sum())} value(s) outside the declared bounds "
                          f"{_bounds_text(c)} (first rows {rows}); use --on-out-of-bounds clip to clip them")


def _bounds_text(c: NumericColumn) -> str:
    if isinstance(c, DatetimeColumn):
        return f"[{c.iso(c.lower)}, {c.iso(c.upper)}]"
    return f"[{c.lower:g}, {c.upper:g}]"


def _numbers(c: NumericColumn, s: pd.Series) -> np.ndarray:
    """A plain numeric column's values as floats (NaN where missing); text, booleans and dates are refused."""
    if s.dtype == bool:
        raise InputDataError(f"column '{c.name}' is numeric in the schema but holds booleans")
    if pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s):
        what = "dates/times" if pd.api.types.is_datetime64_any_dtype(s) else "durations"
        raise InputDataError(f"column '{c.name}' is numeric in the schema but holds {what}; "
                             + ("declare it 'type: datetime' with ISO bounds" if what == "dates/times" else
                                "convert them to numbers (e.g. days) first"))
    v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad_text = np.isnan(v) & s.notna().to_numpy()
    if bad_text.any():
        examples = sorted(map(str, s[bad_text].unique()))[:5]
        dates = pd.to_datetime(pd.Series(examples), errors="coerce", format="ISO8601").notna().all()
        raise InputDataError(
            f"column '{c.name}' is numeric in the schema but has {int(bad_text.sum())} non-numeric "
            f"value(s), e.g. {shorten_list(examples)}" + ("; for dates declare it 'type: datetime'" if dates else "")
        )
    return v


def read_missing(s: pd.Series, schema, column) -> pd.Series:
    """Column ``s`` with every spelling of a missing value that the schema declares for ``column`` (its
    ``na_values`` and the column's own) read as missing; every reader of a private table goes through it."""
    na = schema.missing_spellings(column)
    return s.mask(is_na_spelling(s, na)) if na else s


def warn_one_class(column: CategoricalColumn, class_counts, n_records: int | None = None) -> list[str]:
    """Warn when a label column's records all fall in one class (given the per-level counts); returns the
    message, if any, for the private diagnostics (one record of another class would remove it)."""
    counts = np.asarray(class_counts)
    n = int(counts.sum()) if n_records is None else int(n_records)
    if n < 2 or np.count_nonzero(counts) != 1:
        return []
    level = column.categories[int(np.flatnonzero(counts)[0])]
    return [warn_private(f"label column '{column.name}' holds a single class ({shorten(level)}) in all {n:,} "
                         f"records: a supervised mechanism cannot learn the other classes and the released labels "
                         f"carry no information")]


def warn_private(message: str) -> str:
    """Issue ``message``, marked private, as a :class:`~privrelease.errors.PrivateDataWarning`; return it."""
    text = PRIVATE_PREFIX + message
    warnings.warn(text, PrivateDataWarning, stacklevel=4)
    return text


def _canonical_str(s: pd.Series) -> np.ndarray:
    """Strings for non-object series, each value's text decided from that value alone: an integral
    float prints without '.0' (1.0 -> '1') whatever the other values are, as the schema drafts read it."""
    if pd.api.types.is_float_dtype(s):
        v = s.to_numpy()
        whole = np.isfinite(v) & (v == np.round(v))
        out = s.astype(str).to_numpy(dtype=object)
        out[whole] = v[whole].astype(np.int64).astype(str)
        return out
    return s.astype(str).to_numpy()


@dataclass(frozen=True)
class EncodedDomain:
    """Public structure of an encoded matrix, used by sensitivity calculations.

    Every numeric column lies in [0, 1]; each categorical block is one-hot.

    >>> d = EncodedDomain.numeric_box(3)
    >>> d.p1, d.p2, d.max_l1_diff
    (3, 0, 3)
    """

    p: int
    numeric: tuple[int, ...]
    blocks: tuple[tuple[int, int], ...] = ()

    @classmethod
    def numeric_box(cls, p: int) -> "EncodedDomain":
        return cls(p=int(p), numeric=tuple(range(int(p))), blocks=())

    @classmethod
    def from_encoder(cls, enc: "Encoder") -> "EncodedDomain":
        numeric = tuple(int(i) for i in np.flatnonzero(enc.numeric_mask))
        blocks = tuple((s.start, s.stop) for s in enc.categorical_blocks)
        return cls(p=enc.width, numeric=numeric, blocks=blocks)

    @property
    def p1(self) -> int:
        """Number of numeric columns."""
        return len(self.numeric)

    @property
    def p2(self) -> int:
        """Number of categorical variables (one-hot blocks)."""
        return len(self.blocks)

    @property
    def max_l1_row(self) -> int:
        """max ||x||_1 over encoded rows: p1 + p2."""
        return self.p1 + self.p2

    @property
    def max_l1_diff(self) -> int:
        """max ||x - x'||_1 between two encoded rows: p1 + 2 p2 (a category change moves two dummies)."""
        return self.p1 + 2 * self.p2

    @property
    def max_l2_norm(self) -> float:
        """max ||x||_2 of an encoded row: sqrt(p1 + p2)."""
        return float(np.sqrt(self.p1 + self.p2))

    @property
    def max_l2_diff(self) -> float:
        """max ||x - x'||_2 between two encoded rows: sqrt(p1 + 2 p2)."""
        return float(np.sqrt(self.p1 + 2 * self.p2))

    def to_dict(self) -> dict:
        return {"p": self.p, "p1_numeric": self.p1, "p2_categorical": self.p2}
