"""The default release (gauss-copula) pinned bit for bit: a fixed seed gives the same released bytes
and the same budget split. A refactoring of the default's code (its stages, defaults module, budget
object) must not change either; a change that means to change the release updates the pins, and says
why, in the same commit.

Three generated tables: mixed columns with a label, large enough that the pair tree runs (with its
halved nodes and second parents); no label; a numeric column with ``missing: allowed``. Each through
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

#: The budget split of the two tables with a label (the same stages and public shares).
LABELLED_SPLIT = {'rho_marginals': '0x1.fec4b6908c20cp-7',
 'rho_mixture_basis': '0x1.2f66dc1fa6598p-10',
 'rho_mixture_centre': '0x1.43a0eacc6d2c5p-13',
 'rho_mixture_counts': '0x1.43a0eacc6d2c5p-14',
 'rho_mixture_moments': '0x1.d1375185dcefbp-10',
 'rho_mixture_radius': '0x1.43a0eacc6d2c5p-15',
 'rho_mixture_residual': '0x1.43a0eacc6d2c5p-14',
 'rho_mixture_sums': '0x1.2f66dc1fa6598p-11',
 'rho_mixture_within_radius': '0x1.43a0eacc6d2c5p-15',
 'rho_pairs_measure': '0x1.1f4d70a3d70a4p-8',
 'rho_pairs_select': '0x1.fec28f5c28f5ep-12'}
#: Per table: the certificate's budget split (exact floats, the same on both paths) and, per path, the
#: sha256 of the released CSV and a short hash of the certificate's noise scales (exact floats);
#: generated on the code before the default was cut into its stages.
PINS = {
    "labelled": {"split": LABELLED_SPLIT,
        "memory": ('3fa2e68e0e80a5affa97bf0d27501d21201f42525237eeb4ec3ae9fd1236d0c3', 'a5e20faf69191cd5'),
        "streamed": ('3baae44829bd87505bb7e374e907d7ab2aedd838fb5c122260743b88f1eb2926', '5c25a9726bcbdaba')},
    "unlabelled": {"split": {'rho_marginals': '0x1.fec4b6908c20cp-7',
 'rho_mixture_basis': '0x1.38b08a0bb880dp-10',
 'rho_mixture_centre': '0x1.4d891bc83c453p-13',
 'rho_mixture_moments': '0x1.df7517efd6a37p-10',
 'rho_mixture_radius': '0x1.4d891bc83c453p-15',
 'rho_mixture_residual': '0x1.4d891bc83c453p-14',
 'rho_mixture_sums': '0x1.38b08a0bb880dp-11',
 'rho_pairs_measure': '0x1.1f4d70a3d70a4p-8',
 'rho_pairs_select': '0x1.fec28f5c28f5ep-12'},
        "memory": ('05504efa927c8e6d4c407a121091cd76824301e7f5be918abc27435e221ddbde', '023c6676e82daf4b'),
        "streamed": ('774ff0a6ef0c1fec7ac35f1fbb25363ad745e284611868539e240a8c811c169f', '9e21195a5a5c56ed')},
    "missing": {"split": LABELLED_SPLIT,
        "memory": ('398facd4200f81796d739910d0d2006b57c2e6dd19a3c7e63a131b6a85b7cf09', '3e6304b4b4035ef0'),
        "streamed": ('320a9a4dc8feb547699fc641b256037febb68d79a96215d047e116de237a8e54', 'dd3bfd3203c7f5c5')},
}


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


def test_the_labelled_table_runs_the_pair_tree():
    """The labelled table is large enough for the pair tree, its halved nodes and second parents."""
    df, schema = _labelled()
    syn = Synthesizer(schema, epsilon=1.0, delta=1e-6, rng=0).fit(df)
    tree = syn.mechanism_.pair_tree_
    assert tree is not None and any(s is not None for s in tree.seconds)
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
