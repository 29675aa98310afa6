"""A categorical level spelled like a missing value ("NA": the National Association, a baseball league of the
1870s; Namibia; "None" as a kind of alley) is the level the schema declares, on every reading path: a CSV's
cells were read with pandas' own spellings of a missing value, so "NA" became missing in a CSV and stayed a
level in Parquet, whatever the schema said. A schema that declares a level and also names it a spelling of a
missing value is refused in one line, and a draft never writes one."""

import numpy as np
import pandas as pd
import pytest
import yaml
from cli_helpers import run_cli

from privrelease.errors import SchemaError
from privrelease.io import iter_table_chunks, read_table
from privrelease.release.sources import FileSource
from privrelease.schema import Schema


def _table(tmp_path, n=400):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"lg": rng.choice(["NA", "AL", "NL", "None"], n), "g": rng.integers(0, 160, n),
                       "kind": rng.choice(["a", "b", "NA"], n)})
    df.loc[:9, "lg"] = ""  # an empty cell is missing in any column
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    return path, df


def _schema(**top):
    return Schema.from_dict({**top, "columns": {
        "lg": {"type": "categorical", "categories": ["NA", "AL", "NL", "None"], "missing": "allowed"},
        "g": {"type": "numeric", "lower": 0, "upper": 165, "integer": True},
        "kind": {"type": "categorical", "categories": ["a", "b"], "missing": "allowed", "na_values": ["NA"]}}})


def test_a_level_spelled_like_a_missing_value_is_read_as_the_level_on_every_path(tmp_path):
    path, df = _table(tmp_path)
    schema = _schema(na_values=["?"])
    whole = read_table(path, schema)
    chunks = pd.concat(list(iter_table_chunks(path, schema, chunk_rows=64)), ignore_index=True)
    dask = pytest.importorskip("dask")
    source = FileSource([path], schema, chunk_rows=64)
    parts = pd.concat(dask.compute(*source.dask_partitions()), ignore_index=True)
    for got in (whole, chunks, parts):
        assert got["lg"].isna().sum() == 10
        assert (got["lg"] == "NA").sum() == (df["lg"] == "NA").sum() > 50
        assert (got["lg"] == "None").sum() == (df["lg"] == "None").sum() > 50
        assert (got["kind"] == "NA").sum() == (df["kind"] == "NA").sum()  # read as written; its own na_values decide
    parquet = tmp_path / "t.parquet"
    df.replace({"lg": {"": None}}).to_parquet(parquet)
    assert read_table(parquet, schema)["lg"].equals(whole["lg"])


def test_the_release_keeps_the_level_from_a_csv(tmp_path, capsys):
    path, df = _table(tmp_path, n=3000)
    schema = tmp_path / "s.yaml"
    schema.write_text(yaml.safe_dump(_schema(na_values=["?"]).to_dict()))
    out = tmp_path / "rel.csv"
    code, _, err = run_cli(["release", str(path), "--schema", str(schema), "--epsilon", "4", "--seed", "0",
                            "--out", str(out), "--certificate", str(tmp_path / "c.json")], capsys)
    assert code == 0, err
    rel = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert abs((rel["lg"] == "NA").mean() - (df["lg"] == "NA").mean()) < 0.05
    assert not (rel["kind"] == "NA").any()


def test_a_declared_level_that_is_also_a_missing_spelling_is_refused_in_one_line():
    with pytest.raises(SchemaError, match=r"column 'lg': level\(s\) \['NA'\] are also spellings of a missing") as e:
        _schema(na_values=["na", "?"])  # matched as the reader matches: case and spaces ignored
    assert "\n" not in str(e.value)
    with pytest.raises(SchemaError, match="column 'kind'"):
        Schema.from_dict({"columns": {"kind": {"type": "categorical", "categories": ["a", "NA"], "na_values": ["NA"]}}})
    # the level a 'missing:' entry names is where missing values are meant to go
    s = Schema.from_dict({"na_values": ["NA"], "columns": {"k": {"type": "categorical", "categories": ["a"],
                                                                 "missing": "NA"}}})
    assert s["k"].categories == ("a", "NA")
    with pytest.raises(SchemaError, match="column 'k'"):  # no 'missing:' entry exempts no level
        Schema.from_dict({"na_values": ["None"], "columns": {"k": {"type": "categorical", "categories": ["a", "None"]}}})


@pytest.mark.parametrize("dp", [[], ["--epsilon", "1", "--seed", "0"]], ids=["read", "dp"])
def test_a_draft_with_such_a_declared_level_writes_a_schema_that_loads(tmp_path, capsys, dp):
    path, _ = _table(tmp_path, n=2000)
    levels = tmp_path / "levels.yaml"
    levels.write_text("lg: [NA, AL, NL, None]\n")
    code, out, err = run_cli(["schema", "draft", str(path), "--categorical", "lg,kind", "--integer", "g",
                              "--levels", str(levels), *dp], capsys)
    assert code == 0, err
    schema = Schema.from_dict(yaml.safe_load(out))  # refused before: NA and None were schema-wide spellings
    assert "NA" not in schema.na_values and "None" not in schema.na_values
    assert {"NA", "None"} <= set(schema["kind"].na_values)  # still missing where they are no level
    assert set(schema["lg"].na_values).isdisjoint({"NA", "None"})


def test_an_empty_level_is_refused_in_one_line_by_the_schema_and_by_the_draft(tmp_path, capsys):
    """An empty cell is missing in every column, so a declared level '' could never be read (a CSV's levels read
    with keep_default_na=False hold one where the file has missing values)."""
    with pytest.raises(SchemaError, match=r"column 'r': an empty level \(''\) cannot be told from a missing") as e:
        Schema.from_dict({"columns": {"r": {"type": "categorical", "categories": ["a", ""], "missing": "allowed"}}})
    assert "\n" not in str(e.value)
    path, _ = _table(tmp_path)
    levels = tmp_path / "levels.yaml"
    levels.write_text("kind: [a, b, '']\n")
    code, out, err = run_cli(["schema", "draft", str(path), "--categorical", "lg,kind", "--integer", "g",
                              "--levels", str(levels)], capsys)
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and "lists an empty level for kind" in err
