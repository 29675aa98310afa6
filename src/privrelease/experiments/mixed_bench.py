"""Pieces of the mixed-table benchmark (``benchmarks/bench_mixed.py``): data, public cells, summaries.

* :func:`load_diabetes130` builds the person-level Diabetes 130-US table: identifiers
  dropped, ONE encounter per patient (the first recorded, smallest ``encounter_id``) so
  that a record is a person, the primary diagnosis grouped into the nine ICD-9 families of
  Strack et al. (2014, Table 2), "?" written as the level "Missing", and the label
  ``readmitted`` = "YES" for any readmission (within or after 30 days). Patients are split
  into train and test with a fixed seed (the test share is public). The public schema is
  the bundled ``diabetes130.yaml``.
* :func:`to_cells` / :func:`from_cells` give the marginal-based peers (MST, AIM, PrivBayes)
  the same public cells the fidelity metric uses: each numeric column in equal-width bins
  over its schema bounds, each categorical column at its declared levels; released bins
  are decoded uniformly inside the bin (integers: uniformly among the integers that fall
  in the bin) or to the bin midpoint.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import InputDataError
from ..schema import Schema
from .gauss_pca_bench import load_adult, load_hapt

__all__ = ["load_adult", "load_hapt", "load_diabetes130", "diabetes130_schema", "icd9_family", "to_cells",
           "from_cells", "cell_cardinalities", "mean_sd"]

DIABETES_TEST_SHARE = 0.2
DIABETES_SPLIT_SEED = 0


# ---- Diabetes 130-US, one record per person ------------------------------------------------------

def diabetes130_schema() -> Schema:
    from ..datasets import data_path

    return Schema.from_yaml(data_path("diabetes130.yaml"))


def icd9_family(code) -> str:
    """Strack et al. (2014) Table 2 family of an ICD-9 code ("Missing" for "?").

    >>> [icd9_family(c) for c in ("428", "250.83", "V57", "786", "?", "715", "998")]
    ['Circulatory', 'Diabetes', 'Other', 'Respiratory', 'Missing', 'Musculoskeletal', 'Injury']
    """
    s = str(code).strip()
    if s in ("?", "", "nan"):
        return "Missing"
    if s[0] in "VE":
        return "Other"
    try:
        v = float(s)
    except ValueError:
        return "Other"
    if math.floor(v) == 250:
        return "Diabetes"
    if 390 <= v < 460 or math.floor(v) == 785:
        return "Circulatory"
    if 460 <= v < 520 or math.floor(v) == 786:
        return "Respiratory"
    if 520 <= v < 580 or math.floor(v) == 787:
        return "Digestive"
    if 800 <= v < 1000:
        return "Injury"
    if 710 <= v < 740:
        return "Musculoskeletal"
    if 580 <= v < 630 or math.floor(v) == 788:
        return "Genitourinary"
    if 140 <= v < 240:
        return "Neoplasms"
    return "Other"


def diabetes130_persons(raw: pd.DataFrame, schema: Schema | None = None) -> pd.DataFrame:
    """The person-level table of the schema's columns from the raw encounter file (module notes)."""
    schema = schema or diabetes130_schema()
    need = {"encounter_id", "patient_nbr", "diag_1", "readmitted"}
    if need - set(raw.columns):
        raise InputDataError(f"the diabetes130 file lacks the columns {sorted(need - set(raw.columns))}")
    df = raw.sort_values("encounter_id", kind="stable").drop_duplicates("patient_nbr", keep="first")
    out = {}
    for c in schema.columns:
        if c.name == "diag_1":
            out[c.name] = df["diag_1"].map(icd9_family)
        elif c.name == "readmitted":
            out[c.name] = np.where(df["readmitted"].astype(str).isin(["<30", ">30"]), "YES", "NO")
        elif c.kind == "numeric":
            out[c.name] = pd.to_numeric(df[c.name])
        else:
            out[c.name] = df[c.name].astype(str).str.strip().replace("?", "Missing")
    return pd.DataFrame(out).reset_index(drop=True)


def load_diabetes130(data_dir=None, test_share: float = DIABETES_TEST_SHARE, seed: int = DIABETES_SPLIT_SEED):
    """(train, test, schema, label) of the person-level Diabetes 130-US table, split by patient."""
    from pathlib import Path

    from ..datasets import require_dataset

    d = Path(data_dir) / "diabetes130" if data_dir is not None else require_dataset("diabetes130")
    raw = pd.read_csv(d / "diabetic_data.csv.gz", dtype=str, keep_default_na=False, na_values=[])
    raw["encounter_id"] = pd.to_numeric(raw["encounter_id"])
    schema = diabetes130_schema()
    persons = diabetes130_persons(raw, schema)
    idx = np.random.default_rng(seed).permutation(len(persons))
    n_test = int(round(test_share * len(persons)))
    test = persons.iloc[np.sort(idx[:n_test])].reset_index(drop=True)
    train = persons.iloc[np.sort(idx[n_test:])].reset_index(drop=True)
    return train, test, schema, schema.label.name


# ---- public cells for the marginal-based peers ---------------------------------------------------

def cell_cardinalities(schema: Schema, bins: int) -> list[int]:
    from ..evaluation.distribution import cardinalities

    return cardinalities(schema, bins)


def to_cells(df: pd.DataFrame, schema: Schema, bins: int = 20) -> pd.DataFrame:
    """Integer cell codes ``0..k-1`` per column: the bins / levels the fidelity metric uses.

    Numeric values outside the public bounds are clipped into the end bins; a value that
    is not a declared level is refused (the schema must declare every level).

    >>> s = Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0, "upper": 10},
    ...                                   "c": {"type": "categorical", "categories": ["a", "b"]}}})
    >>> to_cells(pd.DataFrame({"x": [-1, 0.5, 5, 10, 99], "c": list("ababa")}), s, bins=4).values.tolist()
    [[0, 0], [0, 1], [2, 0], [3, 1], [3, 0]]
    """
    from ..evaluation.distribution import discretize

    codes = discretize(df, schema, bins)
    bad = codes < 0
    if bad.any():
        j = int(np.argwhere(bad.any(axis=0))[0, 0])
        c = schema.columns[j]
        raise InputDataError(f"column '{c.name}' holds values that are not declared levels, e.g. "
                             f"{df[c.name][bad[:, j]].iloc[0]!r}")
    return pd.DataFrame(codes, columns=schema.names)


def _integer_members(c, bins: int) -> list[np.ndarray]:
    """The integers of ``[lower, upper]`` in each bin (by the metric's own binning)."""
    from ..evaluation.distribution import discretize

    lo, hi = math.ceil(c.lower), math.floor(c.upper)
    ints = np.arange(lo, hi + 1)
    one = Schema(columns=(c,))
    b = discretize(pd.DataFrame({c.name: ints}), one, bins)[:, 0]
    return [ints[b == k] for k in range(bins)]


def from_cells(codes: pd.DataFrame, schema: Schema, bins: int = 20, how: str = "uniform", rng=None) -> pd.DataFrame:
    """Decode cell codes to values: numeric bins uniformly inside the bin (or at its midpoint), levels as text.

    ``how="uniform"``: a real column draws uniformly in ``[edge_k, edge_k+1)``; an integer
    column draws uniformly among the integers that the metric puts in bin ``k`` (the
    rounded midpoint when no integer falls in it). ``how="midpoint"``: the bin midpoint
    (rounded for integer columns). Either way the decoded value lies in the released bin.
    """
    if how not in ("uniform", "midpoint"):
        raise ValueError(f"how must be 'uniform' or 'midpoint', got {how!r}")
    rng = np.random.default_rng(rng)
    out = {}
    for c in schema.columns:
        k = codes[c.name].to_numpy().astype(int)
        if c.kind == "categorical":
            out[c.name] = np.asarray(c.categories, dtype=object)[k]
            continue
        width = (c.upper - c.lower) / bins
        mid = c.lower + (k + 0.5) * width
        if how == "midpoint":
            out[c.name] = np.round(mid) if c.integer else mid
        elif not c.integer:
            out[c.name] = c.lower + (k + rng.random(len(k))) * width
        else:
            members = _integer_members(c, bins)
            vals = np.round(mid)
            for b in np.unique(k):
                m, sel = members[b], k == b
                if len(m):
                    vals[sel] = rng.choice(m, size=int(sel.sum()))
            out[c.name] = vals
    return pd.DataFrame(out)


# ---- summaries ---------------------------------------------------------------------------------

def mean_sd(values) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value) of the finite values; nan when none."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    if v.size == 0:
        return float("nan"), float("nan")
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0
