"""Mixed tables: loaders with public schemas, and the fidelity / utility measures of the mixed-tables benchmark.

Data (each ``(train, test, schema, label)``):

* ``adult``: the bundled example (11 columns, tested on the real test file).
* ``census_kdd``: UCI Census-Income (KDD), test split only (99,762 rows): a seeded 2/3 - 1/3
  split. Public schema: the levels listed in ``census-income.names`` (plus ``?`` where the
  data README documents it), numeric bounds from the CPS coding (age 0..90, weeks 0..52,
  persons 0..6, wage 0..9999, capital gains and dividends 0..99999 (top code), capital
  losses 0..5000 (declared cap, as in Adult)); ``instance weight`` dropped (.names: not a feature).
* ``diabetes130``: the person-level table of :mod:`privrelease.experiments.mixed_bench`.
* ``gas_drift`` (6 gases), ``musk2`` (binary): all numeric; bounds are the training
  table's min and max (stand-in for published ranges, not private).
* ``hapt``: :func:`privrelease.experiments.gauss_pca_bench.load_hapt`.
* ``wide_mixed``: a generated table of 101 columns (:func:`load_wide_mixed`: 50 numeric, 50 categorical and a
  binary label, all cut from four latent factors), 50,000 training and 10,000 test records.

Measures: :func:`privrelease.evaluation.fidelity.evaluate` (1-way and 2-way TVD over the
public bins and levels, correlation difference, optionally SDMetrics quality, train on the
release and test on real held-out records). These read private data: evaluation only.
"""

from __future__ import annotations

import gzip
import time

import numpy as np
import pandas as pd

from ..datasets import require_dataset

# ---- loaders ---------------------------------------------------------------------------------

CENSUS_NUMERIC = {"age": (0, 90), "wage per hour": (0, 9999), "capital gains": (0, 99999),
                  "capital losses": (0, 5000), "dividends from stocks": (0, 99999),
                  "num persons worked for employer": (0, 6), "weeks worked in year": (0, 52)}
CENSUS_QUESTION = ("state of previous residence", "migration code-change in msa", "migration code-change in reg",
                   "migration code-move within reg", "migration prev res in sunbelt", "country of birth father",
                   "country of birth mother", "country of birth self")
CENSUS_ORDER = [
    "age", "class of worker", "detailed industry recode", "detailed occupation recode", "education",
    "wage per hour", "enroll in edu inst last wk", "marital stat", "major industry code", "major occupation code",
    "race", "hispanic origin", "sex", "member of a labor union", "reason for unemployment",
    "full or part time employment stat", "capital gains", "capital losses", "dividends from stocks",
    "tax filer stat", "region of previous residence", "state of previous residence",
    "detailed household and family stat", "detailed household summary in household", "instance weight",
    "migration code-change in msa", "migration code-change in reg", "migration code-move within reg",
    "live in this house 1 year ago", "migration prev res in sunbelt", "num persons worked for employer",
    "family members under 18", "country of birth father", "country of birth mother", "country of birth self",
    "citizenship", "own business or self employed", "fill inc questionnaire for veteran's admin",
    "veterans benefits", "weeks worked in year", "year", "income"]


def census_schema_dict(names_text: str) -> dict:
    """The public schema of Census-Income (KDD) from its ``.names`` documentation."""
    levels = {}
    for line in names_text.splitlines():
        if ":" not in line or line.startswith("|"):
            continue
        name, rest = line.split(":", 1)
        rest = rest.strip().rstrip(".")
        if name in CENSUS_ORDER and rest != "continuous":
            levels[name] = [v.strip() for v in rest.split(", ")]
    cols = {}
    for name in CENSUS_ORDER:
        if name in ("instance weight", "income"):
            continue
        if name in CENSUS_NUMERIC:
            lo, hi = CENSUS_NUMERIC[name]
            cols[name] = {"type": "numeric", "lower": lo, "upper": hi, "integer": True}
        else:
            cats = list(levels[name]) + (["?"] if name in CENSUS_QUESTION else [])
            cols[name] = {"type": "categorical", "categories": cats}
    cols["income"] = {"type": "categorical", "categories": ["- 50000.", "50000+."], "role": "label"}
    return {"name": "census-income-kdd", "columns": cols}


def _split(df, frac_test, seed):
    idx = np.random.default_rng(seed).permutation(len(df))
    k = int(frac_test * len(df))
    return df.iloc[idx[k:]].reset_index(drop=True), df.iloc[idx[:k]].reset_index(drop=True)


#: A smaller tuning table cut from census_income_kdd, shaped like Adult (5 numeric and 5 categorical
#: columns and the label, 30,000 training records): where the pair structure of a few columns, not
#: the noise of many, decides the 2-way fidelity. Used to choose settings, never to report them.
CENSUS_SMALL_COLUMNS = ("age", "capital gains", "capital losses", "weeks worked in year", "dividends from stocks",
                        "class of worker", "marital stat", "detailed household summary in household", "race",
                        "sex", "income")
CENSUS_SMALL_TRAIN = 30_000


def load_census_small(seed=0, max_train=CENSUS_SMALL_TRAIN):
    """(train, test, schema, label): :data:`CENSUS_SMALL_COLUMNS` of :func:`load_census_kdd`'s split,
    its first ``max_train`` training records (default :data:`CENSUS_SMALL_TRAIN`)."""
    train, test, schema, label = load_census_kdd(seed, max_train=max_train)
    schema = schema.select(CENSUS_SMALL_COLUMNS)
    return train[schema.names], test[schema.names], schema, label


def load_wide_mixed(seed=0, n_train=50_000, n_test=10_000, numeric=50, categorical=50, levels=6):
    """(train, test, schema, label): ``numeric`` columns in [0, 1] at a step of 0.001 and ``categorical`` columns
    of ``levels`` levels, cut from four latent factors (the generator of ``benchmarks/bench_memory.py``), and a
    label ``y`` (about 30 % "yes") from a fifth direction of the same factors; public bounds and levels. The
    table is fixed (generated from seed 0); ``seed`` only names the split, as for the other loaders."""
    from statistics import NormalDist

    from ..schema import Schema

    rng = np.random.default_rng(0)
    n, p, k = n_train + n_test, int(numeric), int(categorical)
    load = rng.normal(size=(4, p + k + 1))
    noise = 0.1 / 0.15
    Z = rng.normal(size=(n, 4)) @ load + rng.normal(0, noise, (n, p + k + 1))
    sd = np.sqrt((load ** 2).sum(axis=0) + noise ** 2)
    cuts = [NormalDist().inv_cdf(q) for q in np.linspace(0, 1, levels + 1)[1:-1]]
    cols = {f"x{j:02d}": np.round(np.clip(0.5 + 0.15 * Z[:, j], 0.0, 1.0), 3) for j in range(p)}
    cols.update({f"c{j:02d}": np.searchsorted(cuts, Z[:, p + j] / sd[p + j]).astype(str) for j in range(k)})
    cols["y"] = np.where(Z[:, -1] / sd[-1] > NormalDist().inv_cdf(0.7), "yes", "no")
    df = pd.DataFrame(cols)
    spec = {c: {"type": "numeric", "lower": 0.0, "upper": 1.0, "step": 0.001} for c in list(cols)[:p]}
    spec.update({c: {"type": "categorical", "categories": [str(v) for v in range(levels)]} for c in list(cols)[p:-1]})
    spec["y"] = {"type": "categorical", "categories": ["no", "yes"], "role": "label"}
    train, test = df.iloc[:n_train].reset_index(drop=True), df.iloc[n_train:].reset_index(drop=True)
    return train, test, Schema.from_dict({"columns": spec}), "y"


def load_census_kdd(seed=0, max_train=None):
    from ..schema import Schema

    d = require_dataset("census_income_kdd")
    with gzip.open(d / "census-income.names.gz", "rt") as f:
        schema_dict = census_schema_dict(f.read())
    df = pd.read_csv(d / "census-income.test.gz", header=None, names=CENSUS_ORDER, skipinitialspace=True,
                     keep_default_na=False, dtype=str)
    df = df.drop(columns=["instance weight"])
    for c in CENSUS_NUMERIC:
        df[c] = pd.to_numeric(df[c])
    # the documented levels come with trailing spaces trimmed; the data's are stripped alike
    for c, spec in schema_dict["columns"].items():
        if spec["type"] == "categorical":
            df[c] = df[c].str.strip()
            spec["categories"] = [v.strip() for v in spec["categories"]]
            extra = sorted(set(df[c].unique()) - set(spec["categories"]))
            spec["categories"] += extra  # levels missing from .names (e.g. one household level): named, not counted
    schema = Schema.from_dict(schema_dict)
    tr, te = _split(df, 1 / 3, seed + 11)
    if max_train:  # a lighter tuning set: the first rows of the (already shuffled) split
        tr, te = tr.iloc[:max_train].reset_index(drop=True), te.iloc[:max_train // 2].reset_index(drop=True)
    return tr, te, schema, "income"


def _numeric_table(df, feats, label, seed, frac_test=0.3):
    from .gauss_pca_bench import _numeric_schema

    df = df[feats + [label]].copy()
    df[label] = df[label].astype(str)
    tr, te = _split(df, frac_test, seed)
    schema = _numeric_schema(tr, feats, label, sorted(df[label].unique()))
    return tr, te, schema, label


def load_gas_drift(seed=0):
    df = pd.read_csv(require_dataset("gas_drift") / "gas_drift.csv.gz")
    return _numeric_table(df, [f"f{i}" for i in range(1, 129)], "gas", seed + 1)


def load_musk2(seed=0):
    df = pd.read_csv(require_dataset("musk2") / "musk2.csv.gz")
    return _numeric_table(df, [f"f{i}" for i in range(1, 167)], "class", seed + 3)


def load_adult(seed=0):
    from .gauss_pca_bench import load_adult as _adult

    return _adult()


def load_hapt(seed=0):
    from .gauss_pca_bench import load_hapt as _hapt

    return _hapt()


def load_diabetes130(seed=0):
    from .mixed_bench import load_diabetes130 as _diabetes

    return _diabetes()


LOADERS = {"adult": load_adult, "wide_mixed": load_wide_mixed, "census_kdd": load_census_kdd, "census_small": load_census_small, "diabetes130": load_diabetes130,
           "gas_drift": load_gas_drift, "musk2": load_musk2, "hapt": load_hapt}


# ---- measures ----------------------------------------------------------------------------------

def measure(real, synth, test, schema, label, pairs=True, sdm=False) -> dict:
    """Headline numbers of :func:`privrelease.evaluation.fidelity.evaluate` (without 2-way TVD unless ``pairs``)."""
    from ..evaluation.fidelity import evaluate

    out = evaluate(real, synth, schema, test, label, sdmetrics=sdm, baseline=False).summary()
    if not pairs:
        out.pop("tvd_2way", None)
    return out


def run_one(data, mechanism, seed, epsilon=1.0, delta=None, pairs=True, sdm=False, **params) -> dict:
    """One release of ``data`` (a loader's tuple) and its measures."""
    from ..release import release

    train, test, schema, label = data
    delta = delta if delta is not None else min(1e-5, 0.1 / len(train))
    t = time.perf_counter()
    res = release(train, schema, mechanism, epsilon, delta=delta, rng=seed, **params)
    sec = time.perf_counter() - t
    out = measure(train, res.data, test, schema, label, pairs=pairs, sdm=sdm)
    out["seconds"] = sec
    out["seed"] = seed
    return out


def summarise(runs: list[dict]) -> dict:
    keys = [k for k in runs[0] if k != "seed"]
    return {k: {"mean": float(np.mean([r[k] for r in runs])), "sd": float(np.std([r[k] for r in runs]))}
            for k in keys}
