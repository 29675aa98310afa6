"""The graphical-model audits of ``test_audit_gauss_copula_model`` with every count computed by the Dask
engine's map (the witnesses, statistics and events derived there; the cluster fixture and the per-table
collections of ``test_audit_gauss_copula_pairs_dask``): the halved-noise mutants show that the audits can fail
on this path."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed", reason="dask[distributed] is an optional extra")

from test_audit_gauss_copula_model import check_measurement, check_selection  # noqa: E402
from test_audit_gauss_copula_pairs_dask import on_cluster  # noqa: E402,F401  (the fixture)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_model_measurement_audit_on_dask_counts(monkeypatch, on_cluster):  # noqa: F811
    check_measurement(monkeypatch, 2.0, 40_000, (35, 36), make_passes=on_cluster)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_model_selection_audit_on_dask_counts(monkeypatch, on_cluster):  # noqa: F811
    check_selection(monkeypatch, 2.0, 20_000, (37, 38), make_passes=on_cluster)
