import pandas as pd
import pytest

from privrelease.datasets import example_paths


@pytest.fixture(scope="module")
def adult_slice(tmp_path_factory):
    """The first 300 records of the bundled Adult data as a CSV file, and the schema's path."""
    data, schema = example_paths("adult")
    d = tmp_path_factory.mktemp("adult")
    path = d / "adult300.csv"
    pd.read_csv(data, nrows=300, dtype=str).to_csv(path, index=False)
    return path, schema
