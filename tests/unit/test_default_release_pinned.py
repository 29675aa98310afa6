"""The default release (gauss-copula) pinned bit for bit: a fixed seed gives the same released bytes
and the same budget split. A refactoring of the default's code (its stages, defaults module, budget
object) must not change either; a change that means to change the release updates the pins, and says
why, in the same commit.

Three generated tables: mixed columns with a label (the graphical model's rounds run); no label; a numeric column with ``missing: allowed``. Each through
the in-memory release (``Synthesizer``) and the streamed file release (chunks of 700 records).
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pandas as pd
import pytest

from privrelease import Synthesizer
from privrelease.release import release_file
from privrelease.schema import Schema


def _labelled(n=6000, seed=1):
    g = np.random.default_rng(seed)
    y = (g.random(n) < 0.35).astype(int)
    grade = g.integers(0, 5, n)
    sub = grade * 3 + g.integers(0, 3, n)  # a code and its group: nearly determined
    age = np.clip(np.rint(g.normal(38 + 8 * y, 12, n)), 17, 90)
    gain = np.where(g.random(n) < 0.85 - 0.4 * y, 0, g.integers(1, 20000, n))
    cont = np.clip(g.normal(0.4 + 0.2 * y, 0.15, n), 0, 1)
    sex = np.where(g.random(n) < 0.5 + 0.3 * y, "m", "f")
    region = np.array(["n", "s", "e", "w"])[np.where(g.random(n) < 0.6, grade % 4, g.integers(0, 4, n))]
    df = pd.DataFrame({"age": age, "gain": gain, "cont": cont, "grade": np.array(list("ABCDE"))[grade],
                       "sub": [f"s{k:02d}" for k in sub], "sex": sex, "region": region,
                       "label": np.where(y == 1, "hi", "lo")})
    schema = Schema.from_dict({"columns": {
        "age": {"type": "numeric", "lower": 17, "upper": 90, "integer": True},
        "gain": {"type": "numeric", "lower": 0, "upper": 99999, "integer": True},
        "cont": {"type": "numeric", "lower": 0, "upper": 1},
        "grade": {"type": "categorical", "categories": list("ABCDE")},
        "sub": {"type": "categorical", "categories": [f"s{k:02d}" for k in range(15)]},
        "sex": {"type": "categorical", "categories": ["f", "m"]},
        "region": {"type": "categorical", "categories": ["n", "s", "e", "w"]},
        "label": {"type": "categorical", "categories": ["lo", "hi"], "role": "label"}}})
    return df, schema


def _unlabelled(n=3000, seed=2):
    g = np.random.default_rng(seed)
    a = g.integers(0, 3, n)
    df = pd.DataFrame({"x": np.clip(g.normal(0.5 + 0.1 * a, 0.2, n), 0, 1).round(3),
                       "k": np.clip(np.rint(g.normal(20 + 5 * a, 6, n)), 0, 60),
                       "a": np.array(["p", "q", "r"])[a], "b": np.where(g.random(n) < 0.4 + 0.2 * (a == 1), "u", "v")})
    schema = Schema.from_dict({"columns": {
        "x": {"type": "numeric", "lower": 0, "upper": 1, "step": 0.001},
        "k": {"type": "numeric", "lower": 0, "upper": 60, "integer": True},
        "a": {"type": "categorical", "categories": ["p", "q", "r"]},
        "b": {"type": "categorical", "categories": ["u", "v"]}}})
    return df, schema


def _missing(n=3000, seed=3):
    g = np.random.default_rng(seed)
    c = g.integers(0, 3, n)
    inc = np.where(g.random(n) < 0.2 + 0.2 * (c == 2), np.nan, np.rint(g.lognormal(8 + 0.3 * c, 0.8, n)))
    df = pd.DataFrame({"income": np.clip(inc, 0, 200000), "hours": np.clip(np.rint(g.normal(40, 10, n)), 1, 99),
                       "c": np.array(["x", "y", "z"])[c], "d": np.where(g.random(n) < 0.5, "t", "f"),
                       "y": np.where(g.random(n) < 0.3 + 0.3 * (c == 1), "1", "0")})
    schema = Schema.from_dict({"columns": {
        "income": {"type": "numeric", "lower": 0, "upper": 200000, "integer": True, "missing": "allowed"},
        "hours": {"type": "numeric", "lower": 1, "upper": 99, "integer": True},
        "c": {"type": "categorical", "categories": ["x", "y", "z"]},
        "d": {"type": "categorical", "categories": ["t", "f"]},
        "y": {"type": "categorical", "categories": ["0", "1"], "role": "label"}}})
    return df, schema


TABLES = {"labelled": _labelled, "unlabelled": _unlabelled, "missing": _missing}

#: Per table: the certificate's budget split (exact floats, the same on both paths) and, per path, the
#: sha256 of the released CSV and a short hash of the certificate's noise scales (exact floats);
#: generated when the graphical model became the default's dependence model (issue 36); digests renewed when a
#: split tree node's noisy children became shrunk toward its spread mass (copula_estimate.shrink),
#: again when the model's records became drawn stratified within each separator cell, when the model
#: became refitted after every round (ModelFit.batch), when its size test began counting the carried cliques, and
#: when a numeric column's empty tail nodes became structural zeros of the model (copula_estimate.empty_tails), and
#: when a numeric column's cells in the model became cut from its released masses (model_plan.mass_cuts) with the
#: model's threshold on a numeric histogram's tails only (copula_estimate.denoise), and when the positions inside the
#: numeric cells became correlated as the drawn cells are (copula_sample.within_scores), and when the selection's
#: score began charging a candidate the error its measurement would leave (copula_measure.kept_error), and when the
#: positions inside a numeric cell began to lean toward where the record's level continues (copula_sample.level_tilts),
#: and when every numeric tree's coarsest level got at most TOP_NODES nodes (copula_tree.NumericTree), and when the
#: selection's score began charging the error the fit keeps of a measurement (copula_measure.kept_error, calibrated),
#: and when a parent's mass began to be spread along a linear density between its neighbours (copula_estimate.spread),
#: and when the leaf at each public bound became a node of its own below the coarsest level (copula_tree.NumericTree),
#: and when each categorical feature's histogram got its weight (copula_plan.histogram_weights; the streamed releases of
#: the unlabelled and missing tables came out the same bytes: their few noisy counts moved by a record or two),
#: and when the model's structural zeros became exact (estimation.graphical.ZERO_POTENTIAL -inf in place of -200: the
#: labelled table's released bytes changed, its noise scales and budget split did not; the other tables' did not).
#: Renewed when a tail cell apart from the range had to pass the floor's rate once for every cell beyond it
#: (copula_estimate.kept_range; the labelled table's bytes changed, its noise scales and split did not).
PINS = {'labelled': {'memory': ('1c726e52321fb8f030fdfe2ec00725ad3618cc681fb1d3912b8645d00217d136', '6a3678f5acf36fc7'),
              'split': {'rho_marginals': '0x1.3f3999999999ap-7',
                        'rho_model_measure': '0x1.aef428f5c28f6p-7',
                        'rho_model_select': '0x1.7f11eb851eb85p-10'},
              'streamed': ('b285f34ef4b66758f8db2cba9dfb51fee091e4bc998ed655e1237d2d5758eb40', '6a3678f5acf36fc7')},
 'missing': {'memory': ('9cce76e1c746b812082fa8127743e44b20139475aa90cf4ac6d92c2987658ca4', 'a00205330c0113ff'),
             'split': {'rho_marginals': '0x1.3f3999999999ap-7',
                       'rho_model_measure': '0x1.aef428f5c28f6p-7',
                       'rho_model_select': '0x1.7f11eb851eb85p-10'},
             'streamed': ('a4c04ef7d6081acfa17378d8bee2f353cc33e0c6ec3bd2cba1938aa27102d443', 'a00205330c0113ff')},
 'unlabelled': {'memory': ('0c6bca5f27111231616b19c73df10590ebe49277c5447b66118c8f25d51565f9', 'f4c45774d23f5077'),
                'split': {'rho_marginals': '0x1.3f3999999999ap-7',
                          'rho_model_measure': '0x1.aef428f5c28f6p-7',
                          'rho_model_select': '0x1.7f11eb851eb85p-10'},
                'streamed': ('162cb31f6db0d778e12e130d0cfe6bf2e636fac04ed35fbb3700bd69f84e1825', 'f4c45774d23f5077')}}


def _release(name: str, path: str, tmp_path):
    df, schema = TABLES[name]()
    if path == "memory":
        syn = Synthesizer(schema, epsilon=1.0, delta=1e-6, rng=0).fit(df)
        cert, data = syn.certificate_, syn.released_
        csv = data.to_csv(index=False).encode()
    else:
        src = tmp_path / "in.csv"
        df.to_csv(src, index=False)
        cert = release_file(src, schema, tmp_path / "out.csv", epsilon=1.0, delta=1e-6, rng=0, chunk_rows=700)
        csv = (tmp_path / "out.csv").read_bytes()
    split = {k: float(v).hex() for k, v in sorted(cert.budget_split.items())}
    scales = json.dumps({k: float(v).hex() for k, v in cert.noise_scales.items()}, sort_keys=True)
    scales = hashlib.sha256(scales.encode()).hexdigest()[:16]
    return hashlib.sha256(csv).hexdigest(), split, scales, cert


def test_the_labelled_table_runs_the_graphical_model():
    """The labelled table's release measures marginals chosen by the model's rounds, per-class histograms."""
    df, schema = _labelled()
    syn = Synthesizer(schema, epsilon=1.0, delta=1e-6, rng=0).fit(df)
    assert syn.mechanism_.model_ is not None and syn.mechanism_.marginals_measured_
    assert syn.mechanism_.groups_ == 2


@pytest.mark.parametrize("path", ["memory", "streamed"])
@pytest.mark.parametrize("name", list(PINS))
def test_release_is_pinned(name, path, tmp_path):
    digest, split, scales, cert = _release(name, path, tmp_path)
    if os.environ.get("PRIVRELEASE_PRINT_PINS"):
        print(f"PIN {(name, path)!r}: ({digest!r}, {split!r}, {scales!r}),")
    assert cert.mechanism == "gauss-copula"
    assert split == PINS[name]["split"]
    assert (digest, scales) == PINS[name][path]
