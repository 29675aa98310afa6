"""The gauss-pca centre and basis audits with every statistic computed by the Dask engine's maps.

The neighbouring pairs, statistics and events are those of ``test_audit_gauss_pca`` (derived
there from the sensitivities). What changes is where the sums come from: the d0 and d1
tables are Dask collections of 2 partitions on a LocalCluster of 2 worker processes, and

* pass 1 (n, ``sum x``, ``sum ||x||^2``) is :func:`gauss_pca._centre_pass_map` run on the
  workers by :class:`~privrelease.engine.passes.DaskPasses` (once per table: it involves no
  noise);
* pass 2 (the statistics of the rows clipped around each run's released centre) is
  :func:`gauss_pca._clipped_stats_map` run on the workers for every run's centre at once.

Each run then takes the mechanism's own noisy steps on those merged statistics, in the order
``fit_executor`` takes them (``fit_centre``, then ``fit_stats``), so the audit bounds the
privacy loss of releases fed by the Dask path, and the halved-noise mutant shows it can fail.
"""

from __future__ import annotations

import sys
from functools import partial

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed", reason="dask[distributed] is an optional extra")

import privrelease.mechanisms.gauss_mixture.gauss_pca as gp  # noqa: E402
from privrelease.engine import RecordMap, SufficientStats  # noqa: E402
from privrelease.engine.passes import DaskPasses  # noqa: E402
from privrelease.audit import HalvedNoiseSource, audit_epsilon  # noqa: E402
from privrelease.schema import Encoder, Schema  # noqa: E402
from test_audit_gauss_pca import (BASIS_DRAW, N_BASIS, Q, R, RecordingSource, _split, basis_event,  # noqa: E402
                                  basis_pair, centre_event, centre_pair)
from pca_audit_helpers import AUDITED_ACCOUNTING  # noqa: E402


def _schema(p: int) -> Schema:
    return Schema.from_dict({"columns": {f"x{j}": {"type": "numeric", "lower": 0.0, "upper": 1.0}
                                         for j in range(p)}})


def _batched_clipped_map(X, y, centres, radius):
    """Pass 2 for many runs at once: the same per-chunk map, once per run's centre (n, S1, S2 stacked)."""
    st = [gp._clipped_stats_map(X, y, centre=c, radius=radius, bound=None, n_classes=None) for c in centres]
    return st[0].n, np.stack([s.s1 for s in st]), np.stack([s.s2 for s in st])


class DaskTable:
    """An encoded table as a Dask collection on the cluster; runs the gauss-pca maps there."""

    def __init__(self, X: np.ndarray, client):
        import dask.dataframe as dd

        schema = _schema(X.shape[1])
        df = pd.DataFrame(X, columns=schema.names)
        self.passes = DaskPasses(dd.from_pandas(df, npartitions=2).to_delayed(), RecordMap(Encoder(schema)),
                                 client=client)
        self.first = self.passes.run(partial(gp._centre_pass_map, bound=None))  # no noise: once

    def clipped(self, centres, radius) -> list[SufficientStats]:
        n, S1, S2 = self.passes.run(partial(_batched_clipped_map, centres=np.asarray(centres), radius=radius))
        return [SufficientStats(p=S1.shape[1], n=n, s1=S1[i], s2=S2[i]) for i in range(len(S1))]


@pytest.fixture(scope="module")
def client(dask_cluster):
    import cloudpickle
    from distributed import Client

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers do not import the tests
    with Client(dask_cluster.scheduler_address) as c:
        yield c


def _centre_batch(tables, eps, factor=1.0):
    def batch(X, rng, k):
        n, s1, sq, _ = tables[id(X)].first
        src = rng if factor == 1 else HalvedNoiseSource(rng, factor=factor)
        m = gp.GaussPCA(accounting=AUDITED_ACCOUNTING, epsilon=eps, n_components=1, clip_radius="schema", budget_split=_split("centre"), rng=src)
        return np.array([m.fit_centre(n, s1, sq).centre_[0] for _ in range(k)])

    return batch


def _real_and_mutant(client, pair, make_batch, event, eps, trials, seeds):
    """The audit of the real mechanism and of its halved-noise mutant on Dask tables of ``pair``."""
    d0, d1 = pair
    tables = {id(d): DaskTable(d, client) for d in (d0, d1)}
    return [audit_epsilon(batch=make_batch(tables, eps, factor), d0=d0, d1=d1, event=event, trials=trials,
                          seed=seed, delta=1e-5, claimed=eps) for factor, seed in zip((1.0, 0.5), seeds)]


@pytest.mark.slow
@pytest.mark.ci_slice
def test_centre_audit_on_dask_statistics(client):
    real, mutant = _real_and_mutant(client, centre_pair(), _centre_batch, centre_event(2.0), 2.0, 30_000, (1, 2))
    assert real.epsilon_lower <= 2.0, real.summary()
    assert mutant.epsilon_lower > 2.0, mutant.summary()


def _basis_batch(tables, eps, factor=1.0):
    def batch(X, rng, k):
        table = tables[id(X)]
        n, s1, sq, _ = table.first
        split = _split("basis")
        split["centre"] = 0.05
        runs = []
        for _ in range(k):
            src = RecordingSource(rng)
            src = src if factor == 1 else HalvedNoiseSource(src, draw=BASIS_DRAW, factor=factor)
            m = gp.GaussPCA(accounting=AUDITED_ACCOUNTING, epsilon=eps, n_components=2, clip_radius=R, budget_split=split, rng=src)
            runs.append((m.fit_centre(n, s1, sq), src if factor == 1 else src.inner))
        out = np.empty(k)
        for i, ((m, rec), stats) in enumerate(zip(runs, table.clipped([m.centre_ for m, _ in runs], m.radius_))):
            m.fit_stats(stats)
            A = rec.releases[BASIS_DRAW].ravel()
            o = Q - m.centre_  # the other records' known part, removed (post-processing)
            out[i] = A[0] - A[2] - (N_BASIS - 1) * (o[0] ** 2 - o[1] ** 2)
        return out

    return batch


@pytest.mark.slow
@pytest.mark.ci_slice
def test_basis_audit_on_dask_statistics(client):
    real, mutant = _real_and_mutant(client, basis_pair(), _basis_batch, basis_event(2.0), 2.0, 20_000, (5, 6))
    assert real.epsilon_lower <= 2.0, real.summary()
    assert mutant.epsilon_lower > 2.0, mutant.summary()
