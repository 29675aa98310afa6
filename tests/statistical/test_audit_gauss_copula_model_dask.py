"""The graphical-model audits of ``test_audit_gauss_copula_model`` with every count computed by the Dask engine's map.

Neighbouring pairs, statistics and events are those of ``test_audit_gauss_copula_model`` (derived there).
What changes is where the counts come from: d0 and d1 are Dask collections of 2 partitions on a
LocalCluster of 2 worker processes, each record encoded by the release's per-record map and counted by
:class:`CellCounter` and :class:`PairCounter` on the workers, as ``release_file(..., engine="dask")`` does.
The counts involve no noise, so each pass runs on the cluster once per table and every audited run takes
the mechanism's own noisy steps on them; the halved-noise mutants show that the audits can fail on this
path.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed", reason="dask[distributed] is an optional extra")

from test_audit_gauss_copula_dask import OncePasses
from test_audit_gauss_copula_model import check_measurement, check_selection

from privrelease.engine import RecordMap
from privrelease.engine.passes import DaskPasses
from privrelease.schema import Encoder, Schema

BINARY = {k: Schema.from_dict({"columns": {c: {"type": "categorical", "categories": ["0", "1"]} for c in "abc"[:k]}})
          for k in (2, 3)}  # the measurement witness's two binary columns, the selection witness's three


@pytest.fixture(scope="module")
def on_cluster(dask_cluster):
    import dask.dataframe as dd
    from distributed import Client

    with Client(dask_cluster.scheduler_address) as client:
        cache = {}

        def make_passes(data):
            X, _ = data
            key = X.tobytes()
            if key in cache:  # one collection (and one run of each pass) per table
                return cache[key]
            k = X.shape[1] // 2
            cols = "abc"[:k]
            df = pd.DataFrame({c: np.argmax(X[:, 2 * j:2 * j + 2], axis=1).astype(str) for j, c in enumerate(cols)})
            rmap = RecordMap(Encoder(BINARY[k], list(cols)), None)
            cache[key] = OncePasses(DaskPasses(dd.from_pandas(df, npartitions=2).to_delayed(), rmap, client=client))
            return cache[key]

        yield make_passes


@pytest.mark.slow
@pytest.mark.ci_slice
def test_model_measurement_audit_on_dask_counts(monkeypatch, on_cluster):
    check_measurement(monkeypatch, 2.0, 10_000, (35, 36), make_passes=on_cluster)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_model_selection_audit_on_dask_counts(monkeypatch, on_cluster):
    check_selection(monkeypatch, 2.0, 20_000, (37, 38), make_passes=on_cluster)
