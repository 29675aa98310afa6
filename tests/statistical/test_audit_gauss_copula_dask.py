"""The gauss-copula marginals audit with the cell counts computed by the Dask engine's map.

Neighbouring pairs, statistic and event are those of ``test_audit_gauss_copula`` (derived there
from the sensitivity ``sqrt(2 d)``). What changes is where the counts come from: d0 and d1 are
Dask collections of 2 partitions on a LocalCluster of 2 worker processes, each record encoded
by the release's per-record map and counted by :class:`CellCounter` on the workers, exactly as
``release_file(..., engine="dask")`` does. The counts involve no noise, so each table's pass runs
on the cluster once and every audited run takes the mechanism's own noisy step on them
(``fit_marginals``); the halved-noise mutant shows that the audit can fail on this path.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed", reason="dask[distributed] is an optional extra")

from privrelease.engine import RecordMap  # noqa: E402
from privrelease.engine.passes import DaskPasses, add  # noqa: E402
from privrelease.schema import Encoder, Schema  # noqa: E402
from test_audit_gauss_copula import check_real_and_mutant  # noqa: E402
import test_audit_gauss_copula_tree as tree_audit  # noqa: E402

SCHEMA = Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0.0, "upper": 1.0},
                                       "label": {"type": "categorical", "categories": ["0", "1"], "role": "label"}}})
MISSING_SCHEMA = Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0.0, "upper": 10.0, "integer": True,
                                                     "missing": "allowed"}}})


class OncePasses:
    """Each kind of pass runs on the cluster once; later runs of it reuse the merged value (noise-free)."""

    def __init__(self, inner):
        self.inner, self.values = inner, {}

    def run(self, fn, merge=add, indexed=False):
        key = type(fn).__name__ if not hasattr(fn, "__name__") else fn.__name__
        if key not in self.values:
            self.values[key] = self.inner.run(fn, merge, indexed)
        return self.values[key]


@pytest.fixture(scope="module")
def on_cluster(dask_cluster):
    import dask.dataframe as dd
    from distributed import Client

    with Client(dask_cluster.scheduler_address) as client:
        def make_passes(data, schema=SCHEMA):
            X, y = data
            df = pd.DataFrame({"x": X[:, 0] * (10.0 if schema is MISSING_SCHEMA else 1.0)})
            lab = None
            if y is not None:
                df["label"] = np.asarray(y).astype(str)
                lab = Encoder(schema, ["label"])
            rmap = RecordMap(Encoder(schema, ["x"]), lab)
            return OncePasses(DaskPasses(dd.from_pandas(df, npartitions=2).to_delayed(), rmap, client=client))

        yield make_passes


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("labelled", [False, True])
def test_marginals_audit_on_dask_counts(monkeypatch, on_cluster, labelled):
    check_real_and_mutant(monkeypatch, 2.0, 20_000, (7, 8), labelled, make_passes=on_cluster)


# ---- the copula's latent passes (the mixture on the copula-transformed rows) on the cluster -------
CATS = Schema.from_dict({"columns": {**{f"c{j}": {"type": "categorical", "categories": ["0", "1"]} for j in range(3)},
                                     "label": {"type": "categorical", "categories": ["0", "1"], "role": "label"}}})


@pytest.fixture(scope="module")
def copula_on_cluster(dask_cluster):
    """``make_passes(data)`` for encoded binary tables: the records decoded to levels, put in a Dask
    collection of 2 partitions and encoded again on the workers (one collection per table)."""
    import dask.dataframe as dd
    from distributed import Client

    with Client(dask_cluster.scheduler_address) as client:
        made = {}

        def make_passes(data):
            if id(data) not in made:
                X, y = data
                df = pd.DataFrame({f"c{j}": np.argmax(X[:, 2 * j:2 * j + 2], axis=1).astype(str) for j in range(3)})
                lab = None
                if y is not None:
                    df["label"] = np.asarray(y).astype(str)
                    lab = Encoder(CATS, ["label"])
                rmap = RecordMap(Encoder(CATS, [f"c{j}" for j in range(3)]), lab)
                made[id(data)] = (data, dd.from_pandas(df, npartitions=2).to_delayed(), rmap)
            _, frames, rmap = made[id(data)]
            return DaskPasses(frames, rmap, client=client)

        yield make_passes


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("case_id", ["total", "mixture within-radius"])
def test_copula_latent_passes_audit_on_dask(monkeypatch, copula_on_cluster, case_id):
    """Every draw of the default release (and the labelled third pass) with the copula map and the
    mixture's maps run by the workers: the captured queries equal the in-memory ones, the real release
    is not refuted and a halved-noise mutant of a mixture statistic computed there is caught."""
    from test_draw_audits_gauss_copula import check_on_passes

    check_on_passes(monkeypatch, case_id, copula_on_cluster,
                    ["moments_std" if case_id == "total" else "within_radius_std"])


UNEQUAL_SCHEMA = Schema.from_dict({"columns": {"c0": {"type": "categorical", "categories": ["0", "1"]},
                                               "c1": {"type": "categorical", "categories": list("01234")}}})


@pytest.mark.slow
@pytest.mark.ci_slice
def test_weighted_histograms_audit_on_dask(monkeypatch, dask_cluster):
    """The histograms of unequal weights (a 2- and a 5-level column) with the records encoded and counted on the
    workers: the captured queries equal the in-memory ones, the real release is not refuted, its halved noise caught."""
    import dask.dataframe as dd
    from distributed import Client

    from copula_audit_cases import UNEQUAL
    from test_draw_audits_gauss_copula import check_on_passes

    with Client(dask_cluster.scheduler_address) as client:
        made = {}

        def make_passes(data):
            if id(data) not in made:
                X, _ = data
                df = pd.DataFrame({f"c{j}": np.argmax(X[:, a:e], axis=1).astype(str)
                                   for j, (a, e) in enumerate(UNEQUAL.blocks)})
                rmap = RecordMap(Encoder(UNEQUAL_SCHEMA, ["c0", "c1"]), None)
                made[id(data)] = (data, dd.from_pandas(df, npartitions=2).to_delayed(), rmap)
            _, frames, rmap = made[id(data)]
            return DaskPasses(frames, rmap, client=client)

        check_on_passes(monkeypatch, "marginals (unequal levels)", make_passes)


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("labelled", [False, True])
def test_tree_levels_audit_on_dask_counts(monkeypatch, on_cluster, labelled):
    """The tree witness of ``test_audit_gauss_copula_tree``: the leaf counts are counted on the workers,
    every level's counts derived from them and released by the mechanism."""
    tree_audit.check_real_and_mutant(monkeypatch, 2.0, 12_000, (17, 18), "tree", labelled, make_passes=on_cluster)


@pytest.mark.slow
def test_missing_cell_audit_on_dask_counts(monkeypatch, on_cluster):
    """The missing-cell witness on the workers (the encoder gives NaN for a missing value there)."""
    tree_audit.check_real_and_mutant(monkeypatch, 2.0, 8_000, (19, 20), "missing",
                                     make_passes=lambda data: on_cluster(data, MISSING_SCHEMA))
