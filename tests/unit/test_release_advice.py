"""Release-time warnings from public quantities only (n, epsilon, the schema): a budget too small for its
records and columns, a label with more levels than the records can support."""

import warnings

import pytest

from privrelease.errors import BudgetWarning
from privrelease.release.advice import expected_noise_tvd, warn_public
from privrelease.schema import Schema


def _schema(label_levels=3, numeric=4):
    cols = {f"x{i}": {"type": "numeric", "lower": 0, "upper": 1} for i in range(numeric)}
    cols["island"] = {"type": "categorical", "categories": ["a", "b", "c"]}
    cols["species"] = {"type": "categorical", "categories": [f"s{i}" for i in range(label_levels)], "role": "label"}
    return Schema.from_dict({"columns": cols})


def _said(schema, n, epsilon):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        warn_public(schema, n, epsilon)
    return [str(r.message) for r in rec if issubclass(r.category, BudgetWarning)]


def test_a_budget_too_small_for_its_records_is_warned():
    """Pins epsilon 0.01 on 342 records (a 1-way TVD of 0.86) passing without a remark."""
    (msg,) = [m for m in _said(_schema(), 342, 0.01) if m.startswith("epsilon=0.01")]
    assert "342 records and 6 columns" in msg and "epsilon >= " in msg


def test_the_rule_is_the_noise_scale_against_n_and_cells():
    s = _schema()
    cells = (4 * 20 + 3 + 3) / 6
    assert expected_noise_tvd(s, 342, 0.01) == pytest.approx(cells * 6 / (0.01 * 342))
    # the suggested epsilon brings tau to the threshold
    msg = [m for m in _said(s, 342, 0.01) if m.startswith("epsilon=")][0]
    need = float(msg.split("epsilon >= ")[1].split(",")[0])
    assert expected_noise_tvd(s, 342, need) == pytest.approx(0.1, rel=0.05)


def test_a_label_with_more_levels_than_the_records_support_is_warned():
    """Pins a label of 40 levels on 342 records passing without a remark (9 records per class)."""
    msgs = _said(_schema(label_levels=40), 342, 5.0)
    (msg,) = [m for m in msgs if m.startswith("label column 'species' has 40 levels")]
    assert "about 9 per level" in msg and "merge rare levels" in msg


def test_enough_records_say_nothing():
    assert _said(_schema(), 30_000, 1.0) == []
    assert _said(_schema(), 342, None) == []  # distributional mechanisms: no epsilon, no rule


def test_the_cli_release_says_it(tmp_path, capsys):
    import numpy as np
    import pandas as pd

    from privrelease.cli.app import main

    rng = np.random.default_rng(0)
    df = pd.DataFrame({**{f"x{i}": rng.random(342) for i in range(4)}, "island": rng.choice(list("abc"), 342),
                       "species": rng.choice(["s0", "s1", "s2"], 342)})
    df.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.yaml").write_text(_schema().to_yaml())
    main(["release", str(tmp_path / "d.csv"), "-s", str(tmp_path / "s.yaml"), "-e", "0.01", "--seed", "0",
          "--out", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert "warning: epsilon=0.01 is small for 342 records and 6 columns" in err, err
