"""The report's figures: integer bins labelled with whole numbers, a level absent from one table left blank
(never a 1.0 on the difference's diagonal), Cramér's V known by hand, bars that never blend."""

import numpy as np
import pandas as pd
import pytest

from privrelease.evaluation.figures import cell_labels, column_figure, cramers_v
from privrelease.evaluation.report import correlation_matrices
from privrelease.schema import CategoricalColumn, NumericColumn, Schema


def test_integer_bins_are_labelled_with_the_whole_numbers_they_hold():
    labels = cell_labels(NumericColumn("age", 0, 100, integer=True), 20)
    assert labels[0] == "missing" and labels[1] == "0\u20134" and labels[20] == "95\u2013100"
    # 3 integers over 6 bins: a bin holding no integer has no label, one holding one integer its value
    assert cell_labels(NumericColumn("k", 0, 2, integer=True), 6)[1:] == ["0", "", "", "1", "", "2"]
    assert cell_labels(NumericColumn("x", 0, 1), 2)[1:] == ["0\u20130.5", "0.5\u20131"]


def test_level_absent_from_one_table_is_blank_not_one():
    s = Schema([NumericColumn("x", 0, 10), CategoricalColumn("c", ("a", "b"))])
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0, 9.0], "c": ["a", "a", "b", "b"]})
    released = real.assign(c="a")  # level b absent, c=a constant
    Cr, Cs, D = correlation_matrices(real, released, s)
    assert np.isnan(np.diag(D)).all() and np.isnan(D[1:, :]).all() and np.isnan(D[:, 1:]).all()
    assert np.isnan(Cs[1:, :]).all() and abs(Cr[0, 2]) > 0.5 and np.isnan(np.diag(Cr)).all()


def test_cramers_v_known_values():
    a = np.array([0, 0, 1, 1, 0, 1])
    v = cramers_v(np.c_[a, a, 1 - a, np.zeros(6, int)], [2, 2, 2, 2])
    assert v[0, 1] == 1.0 and v[0, 2] == 1.0 and np.isnan(v[0, 3]) and np.isnan(v[0, 0])
    b = np.array([0, 1, 0, 1])
    assert cramers_v(np.c_[np.array([0, 0, 1, 1]), b], [2, 2])[0, 1] == 0.0
    # a 3:1 / 1:3 table: phi = (3 * 3 - 1 * 1) / 16 = 0.5 (chi2 / n = 0.25)
    x, y = np.array([0, 0, 0, 0, 1, 1, 1, 1]), np.array([0, 0, 0, 1, 1, 1, 1, 0])
    assert cramers_v(np.c_[x, y], [2, 2])[0, 1] == pytest.approx(0.5)


def test_bars_side_by_side_without_translucency():
    col = NumericColumn("x", 0, 1)
    fig = column_figure(col, np.array([0, 0.5, 0.5]), np.array([0, 0.2, 0.8]), cell_labels(col, 2),
                        pd.Series([0.1, 0.9]), pd.Series([0.2, 0.8]))
    assert fig.startswith("<svg") and "opacity: 0.45" not in fig and ">released</text>" in fig.replace("\n", "")


# ---- issue 35, item 16 ------------------------------------------------------------------------------

def test_a_many_level_column_shows_its_top_levels_and_one_bar_for_the_others():
    """An 88-level categorical chart had 88 overlapping labels: the top levels are drawn, the rest as one
    "other levels (k)" bar holding their shares."""
    from privrelease.evaluation.figures import MAX_BARS, bar_cells

    col = CategoricalColumn("state", tuple(f"level{i:02d}" for i in range(88)))
    rng = np.random.default_rng(0)
    pr = np.r_[0.0, rng.dirichlet(np.ones(88))]
    ps = np.r_[0.0, rng.dirichlet(np.ones(88))]
    r, s, labels = bar_cells(col, pr, ps, cell_labels(col, 10))
    k = 88 - (MAX_BARS - 1)
    assert len(labels) == MAX_BARS + 1 and labels[-1] == f"other levels ({k})"  # the missing cell first
    assert r.sum() == pytest.approx(1.0) and s.sum() == pytest.approx(1.0)
    top = np.argsort(-np.maximum(pr[1:], ps[1:]), kind="stable")[:MAX_BARS - 1]
    assert set(labels[1:-1]) == {f"level{i:02d}" for i in top}
    fig = column_figure(col, pr, ps, cell_labels(col, 10))
    assert f"other levels ({k})" in fig and fig.count("level") < 2 * MAX_BARS
    few = CategoricalColumn("c", ("a", "b", "c"))
    assert bar_cells(few, np.array([0, .2, .3, .5]), np.array([0, .5, .3, .2]), cell_labels(few, 10))[2] == \
        cell_labels(few, 10)


def test_numeric_bin_labels_have_the_digits_that_tell_bins_apart():
    """Bins of a narrow range were labelled 44.9-44.9: each label's ends differ, and so do adjacent labels."""
    labels = cell_labels(NumericColumn("x", 44.9, 44.95), 20)[1:]
    assert len(set(labels)) == 20
    for text in labels:
        lo, hi = text.split("\u2013")
        assert lo != hi and float(lo) < float(hi), text
    assert cell_labels(NumericColumn("x", 0, 1), 2)[1:] == ["0\u20130.5", "0.5\u20131"]  # short where it can be


def test_every_table_of_the_report_scrolls_sideways(small_df, small_schema):
    """A wide table ran past the window: every table sits in a box that scrolls horizontally."""
    import re

    from privrelease.evaluation.report import build_report

    page = build_report(small_df, small_df.sample(frac=1.0, random_state=0), small_schema, sdmetrics=False,
                        certificate={"mechanism": "laplace", "epsilon": 1.0, "budget_split": {"a": 0.5}})
    tables = [m.start() for m in re.finditer("<table", page)]
    assert len(tables) >= 3
    assert all(page[:i].endswith('<div class="scroll">') for i in tables)


def test_the_schema_provenance_is_a_readable_list_not_json():
    from privrelease.evaluation.report import _certificate_section

    html = _certificate_section({"mechanism": "gauss-copula", "schema_provenance": {
        "method": "dp-draft", "epsilon": 0.5, "per_column": {"epsilon": 0.01, "quantiles": [0.01, 0.99]},
        "ranges": {}, "stated": {"age": "integer"}}})
    assert "<pre>" not in html and '"method"' not in html and "{" not in html
    assert "<dl" in html and "<dt>method</dt><dd>dp-draft</dd>" in html and "<dt>per column</dt>" in html
    assert "<dd>0.01, 0.99</dd>" in html and "<dt>ranges</dt><dd>none</dd>" in html and "<dt>age</dt><dd>integer</dd>" in html
