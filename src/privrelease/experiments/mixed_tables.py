"""Mixed tables: loaders with public schemas, and the fidelity / utility measures of the mixed-tables benchmark.

Data (each ``(train, test, schema, label)``):

* ``adult``: the bundled example (11 columns, tested on the real test file).
* ``census_kdd``: UCI Census-Income (KDD), test split only (99,762 rows): a seeded 2/3 - 1/3
  split. Public schema: the levels listed in ``census-income.names`` (plus ``?`` where the
  data README documents it), numeric bounds from the CPS coding (age 0..90, weeks 0..52,
  persons 0..6, wage 0..9999, capital gains and dividends 0..99999 (top code), capital
  losses 0..5000 (declared cap, as in Adult)); ``instance weight`` dropped (.names: not a feature).
* ``diabetes130``: one encounter per patient (the first by ``encounter_id``), identifiers and
  the two constant columns dropped, ``diag_*`` grouped into ICD-9 chapters (public ranges);
  numeric bounds from the data README (documented ranges); string levels as listed
  there (read from the file: a benchmark stand-in for a published code list). Label:
  readmitted within 30 days (``<30``) against the rest. Seeded 70/30 split by patient.
* ``gas_drift`` (6 gases), ``musk2`` (binary): all numeric; bounds are the training
  table's min and max (stand-in for published ranges, not private).
* ``hapt``: :func:`privrelease.experiments.gauss_pca_bench.load_hapt`.

Measures, as defined in the mixed-tables benchmark: 1-way TVD (numeric columns in 20
equal-width bins over the public bounds, categorical at their levels, mean over
columns, the label included), 2-way TVD (10 bins per numeric column, mean over pairs;
at most ``max_pairs`` pairs drawn at random when there are more), train-on-synthetic
test-on-real with a standardised logistic regression and scikit-learn's
HistGradientBoostingClassifier on the encoded features (accuracy; AUC for binary
labels, macro-F1 otherwise). These read private data: they are for evaluation only.
"""

from __future__ import annotations

import gzip
import itertools
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


DIABETES_NUMERIC = {"time_in_hospital": (1, 14), "num_lab_procedures": (1, 132), "num_procedures": (0, 6),
                    "num_medications": (1, 81), "number_outpatient": (0, 42), "number_emergency": (0, 76),
                    "number_inpatient": (0, 21), "number_diagnoses": (1, 16)}
ICD9_CHAPTERS = [(1, 139, "infectious"), (140, 239, "neoplasms"), (240, 279, "endocrine"), (280, 289, "blood"),
                 (290, 319, "mental"), (320, 389, "nervous"), (390, 459, "circulatory"), (460, 519, "respiratory"),
                 (520, 579, "digestive"), (580, 629, "genitourinary"), (630, 679, "pregnancy"), (680, 709, "skin"),
                 (710, 739, "musculoskeletal"), (740, 759, "congenital"), (760, 779, "perinatal"),
                 (780, 799, "ill-defined"), (800, 999, "injury")]
ICD9_LEVELS = [c for _, _, c in ICD9_CHAPTERS] + ["diabetes", "V-code", "E-code", "?"]


def icd9_chapter(code: str) -> str:
    """ICD-9 chapter of a code (250.xx, diabetes, kept apart as in Strack et al. 2014)."""
    if code == "?":
        return "?"
    if code.startswith("V"):
        return "V-code"
    if code.startswith("E"):
        return "E-code"
    v = float(code)
    if 250 <= v < 251:
        return "diabetes"
    for lo, hi, name in ICD9_CHAPTERS:
        if lo <= int(v) <= hi:
            return name
    return "?"


def load_diabetes130(seed=0):
    from ..schema import Schema

    d = require_dataset("diabetes130")
    df = pd.read_csv(d / "diabetic_data.csv.gz", keep_default_na=False, dtype=str)
    df["encounter_id"] = df["encounter_id"].astype(np.int64)
    df = df.sort_values("encounter_id").drop_duplicates("patient_nbr", keep="first")
    df = df.drop(columns=["encounter_id", "patient_nbr", "examide", "citoglipton"])
    for c in ("diag_1", "diag_2", "diag_3"):
        df[c] = df[c].map(icd9_chapter)
    df["readmitted"] = np.where(df["readmitted"] == "<30", "<30", "other")
    cols = {}
    for c in df.columns:
        if c in DIABETES_NUMERIC:
            df[c] = pd.to_numeric(df[c])
            lo, hi = DIABETES_NUMERIC[c]
            cols[c] = {"type": "numeric", "lower": lo, "upper": hi, "integer": True}
        elif c.startswith("diag_"):
            cols[c] = {"type": "categorical", "categories": list(ICD9_LEVELS)}
        elif c == "readmitted":
            cols[c] = {"type": "categorical", "categories": ["other", "<30"], "role": "label"}
        else:
            cols[c] = {"type": "categorical", "categories": sorted(df[c].unique())}
    schema = Schema.from_dict({"name": "diabetes130-first-encounter", "columns": cols})
    tr, te = _split(df.reset_index(drop=True), 0.3, seed + 13)
    return tr, te, schema, "readmitted"


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


LOADERS = {"adult": load_adult, "census_kdd": load_census_kdd, "diabetes130": load_diabetes130,
           "gas_drift": load_gas_drift, "musk2": load_musk2, "hapt": load_hapt}


# ---- measures ----------------------------------------------------------------------------------

def _codes(df, schema, bins):
    """Integer codes per column: numeric in ``bins`` equal-width bins over the public bounds, levels otherwise."""
    out, sizes = {}, {}
    for c in schema.columns:
        s = df[c.name]
        if c.kind == "numeric":
            v = (pd.to_numeric(s).to_numpy(float) - c.lower) / (c.upper - c.lower)
            out[c.name] = np.clip(np.floor(v * bins), 0, bins - 1).astype(np.int64)
            sizes[c.name] = bins
        else:
            cats = pd.Index([str(x) for x in c.categories])
            out[c.name] = np.maximum(cats.get_indexer(s.astype(str).to_numpy()), 0)
            sizes[c.name] = len(cats)
    return out, sizes


def tvd_1way(real, synth, schema, bins=20) -> float:
    a, k = _codes(real, schema, bins)
    b, _ = _codes(synth, schema, bins)
    vals = [0.5 * np.abs(np.bincount(a[c], minlength=k[c]) / len(real)
                         - np.bincount(b[c], minlength=k[c]) / len(synth)).sum() for c in k]
    return float(np.mean(vals))


def tvd_2way(real, synth, schema, bins=10, max_pairs=400, seed=0) -> float:
    a, k = _codes(real, schema, bins)
    b, _ = _codes(synth, schema, bins)
    pairs = list(itertools.combinations(list(k), 2))
    if len(pairs) > max_pairs:
        idx = np.random.default_rng(seed).choice(len(pairs), max_pairs, replace=False)
        pairs = [pairs[i] for i in sorted(idx)]
    vals = []
    for c1, c2 in pairs:
        m = k[c1] * k[c2]
        ha = np.bincount(a[c1] * k[c2] + a[c2], minlength=m) / len(real)
        hb = np.bincount(b[c1] * k[c2] + b[c2], minlength=m) / len(synth)
        vals.append(0.5 * np.abs(ha - hb).sum())
    return float(np.mean(vals))


def tstr(synth, test, schema, label) -> dict:
    """Train on ``synth``, test on ``test``: LR and GBDT accuracy, AUC (binary) or macro-F1."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score, roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ..schema import Encoder

    enc = Encoder(schema, [c.name for c in schema.columns if c.name != label])
    Xtr, Xte = enc.encode(synth).X, enc.encode(test).X
    ytr, yte = synth[label].astype(str).to_numpy(), test[label].astype(str).to_numpy()
    levels = [str(v) for v in schema[label].categories]
    out = {}
    for name, model in (("lr", make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))),
                        ("gbdt", HistGradientBoostingClassifier(random_state=0))):
        if len(np.unique(ytr)) < 2:
            out[f"{name}_acc"] = float(np.mean(yte == ytr[0]))
            out[f"{name}_auc" if len(levels) == 2 else f"{name}_f1"] = 0.5 if len(levels) == 2 else 0.0
            continue
        model.fit(Xtr, ytr)
        pred = model.predict(Xte)
        out[f"{name}_acc"] = float(np.mean(pred == yte))
        if len(levels) == 2:
            pos = list(model.classes_).index(levels[1]) if levels[1] in model.classes_ else 1
            out[f"{name}_auc"] = float(roc_auc_score(yte == levels[1], model.predict_proba(Xte)[:, pos]))
        else:
            out[f"{name}_f1"] = float(f1_score(yte, pred, average="macro"))
    return out


def sdmetrics_quality(real, synth, schema) -> dict:
    """SDMetrics' single-table QualityReport (KS / TV column shapes; correlation / contingency pair trends)."""
    from sdmetrics.reports.single_table import QualityReport

    cols = {c.name: {"sdtype": "numerical" if c.kind == "numeric" else "categorical"} for c in schema.columns}
    rep = QualityReport()
    fix = {c.name: str for c in schema.columns if c.kind != "numeric"}
    rep.generate(real[schema.names].astype(fix), synth[schema.names].astype(fix), {"columns": cols}, verbose=False)
    props = rep.get_properties().set_index("Property")["Score"]
    return {"sdm_overall": float(rep.get_score()), "sdm_shapes": float(props["Column Shapes"]),
            "sdm_pairs": float(props["Column Pair Trends"])}


def measure(real, synth, test, schema, label, pairs=True, sdm=False) -> dict:
    out = {"tvd_1way": tvd_1way(real, synth, schema)}
    if pairs:
        out["tvd_2way"] = tvd_2way(real, synth, schema)
    if sdm:
        out.update(sdmetrics_quality(real, synth, schema))
    out.update(tstr(synth, test, schema, label))
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
