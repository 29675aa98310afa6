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
