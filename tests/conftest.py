import numpy as np
import pandas as pd
import pytest

from privrelease.datasets import load_example, shared_datasets_dir
from privrelease.schema import Schema


@pytest.fixture
def small_schema():
    return Schema.from_dict({
        "columns": {
            "age": {"type": "numeric", "lower": 0, "upper": 100, "integer": True},
            "score": {"type": "numeric", "lower": 0.0, "upper": 1.0},
            "color": {"type": "categorical", "categories": ["red", "green", "blue"]},
            "label": {"type": "categorical", "categories": ["no", "yes"], "role": "label"},
        }
    })


@pytest.fixture
def small_df():
    rng = np.random.default_rng(0)
    n = 200
    return pd.DataFrame({
        "age": rng.integers(0, 101, n),
        "score": rng.random(n),
        "color": rng.choice(["red", "green", "blue"], n),
        "label": rng.choice(["no", "yes"], n),
    })


@pytest.fixture(scope="session")
def adult():
    return load_example("adult")


@pytest.fixture(scope="session")
def shared_data():
    d = shared_datasets_dir()
    if d is None:
        pytest.skip("the real data sets folder (../shared/datasets or $PRIVRELEASE_DATA) is not present")
    return d


@pytest.fixture(scope="module")
def dask_cluster():
    """A LocalCluster of 2 worker processes (one thread each) for a test module; skipped without
    dask.distributed. Tests name it by its scheduler address, as ``--scheduler`` does."""
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is an optional extra")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  memory_limit=0) as cluster:
        yield cluster
