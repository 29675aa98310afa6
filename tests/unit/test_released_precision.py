"""A numeric column without a declared step: released at a stated precision, written so that it reads
back as released, and compared at that precision by the evaluation (issue 35, item 13)."""

import numpy as np
import pandas as pd
import pytest

from privrelease import release, release_file
from privrelease.evaluation.columns import numeric_column
from privrelease.io import write_table
from privrelease.schema import Schema

ATOM = 1.60943794250488  # held by 31.6 % of the records


@pytest.fixture
def atom_table():
    rng = np.random.default_rng(0)
    n = 6000
    x = rng.lognormal(1.0, 0.5, n)
    x[rng.random(n) < 0.316] = ATOM
    df = pd.DataFrame({"x": x, "y": rng.normal(50, 10, n), "c": rng.choice(["a", "b"], n)})
    schema = Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0, "upper": 20},
                                           "y": {"type": "numeric", "lower": 0, "upper": 100},
                                           "c": {"type": "categorical", "categories": ["a", "b"]}}})
    return df, schema


def test_released_values_read_back_as_released_and_the_atom_stays_one(atom_table, tmp_path):
    df, schema = atom_table
    r = release(df, schema, "gauss-copula", 1.0, rng=0)
    for name in ("o.csv", "o.csv.gz", "o.parquet"):
        write_table(r.data, tmp_path / name)
        back = pd.read_csv(tmp_path / name) if "csv" in name else pd.read_parquet(tmp_path / name)
        assert np.array_equal(back["x"].to_numpy(), r.data["x"].to_numpy())  # every digit read back
        assert np.array_equal(back["y"].to_numpy(), r.data["y"].to_numpy())
    top = back["x"].value_counts(normalize=True)
    assert top.iloc[0] == pytest.approx(0.316, abs=0.03)  # the model's atom is one released value
    df.to_csv(tmp_path / "in.csv", index=False)
    streamed = release_file(tmp_path / "in.csv", schema, tmp_path / "s.csv", "gauss-copula", 1.0, rng=0)
    assert streamed.n_output_records == len(df)
    s = pd.read_csv(tmp_path / "s.csv")["x"].value_counts(normalize=True)
    assert s.iloc[0] == pytest.approx(0.316, abs=0.03)


def test_the_certificate_states_the_precision_of_a_column_without_step(atom_table):
    """Issue 35, item 13: a column without step is released at the precision of its public cells; the
    certificate says which (a public function of the bounds and the number of cells)."""
    df, schema = atom_table
    r = release(df, schema, "gauss-copula", 1.0, rng=0)
    x, y = r.certificate.extra["released_precision"]  # the numeric columns in the schema's order
    cells = r.certificate.extra["marginal_cells"]  # an atom at each bound, equal cells between
    assert x == pytest.approx(20 / (cells[0] - 2)) and y == pytest.approx(100 / (cells[1] - 2))
    # the records the model put in the atom's cell are released within that precision of it
    near = np.abs(r.data["x"].to_numpy() - ATOM) <= x
    assert near.mean() == pytest.approx(0.316, abs=0.03)


def test_evaluation_finds_the_atom_a_release_kept_at_its_precision(atom_table):
    """Issue 35, item 13: the atom held by 31.6 % of the records, released at 1.60943 (its cell's shortest
    decimal), was reported as gone (0 % released)."""
    df, schema = atom_table
    r = release(df, schema, "gauss-copula", 1.0, rng=0)
    m = numeric_column(df["x"], r.data["x"], schema.columns[0])
    (atom,) = [a for a in m["atoms"] if a["real"] > 0.2]
    assert atom["released"] == pytest.approx(atom["real"], abs=0.03), m["atoms"]
    assert m["ks"] < 0.05, m["ks"]
