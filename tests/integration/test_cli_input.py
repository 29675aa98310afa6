"""Forgiving input: the CSV dialect, encodings, content detected by its bytes, and every refusal in the
command line's own words (one line, exit 2, nothing written)."""

import gzip

import numpy as np
import pandas as pd
import pytest
import yaml

from cli_helpers import run_cli

SCHEMA = {"columns": {
    "age": {"type": "numeric", "lower": 0, "upper": 100, "integer": True},
    "city": {"type": "categorical", "categories": ["Zürich", "Genève"]},
    "label": {"type": "categorical", "categories": ["no", "yes"], "role": "label"},
}}


def _table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(0, 101, n), "city": rng.choice(["Zürich", "Genève"], n),
                         "label": rng.choice(["no", "yes"], n)})


@pytest.fixture
def schema(tmp_path):
    s = tmp_path / "schema.yaml"
    s.write_text(yaml.safe_dump(SCHEMA, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return s


def _release(capsys, tmp_path, data, schema, *extra):
    out = tmp_path / "out.csv"
    code, _, err = run_cli(["release", str(data), "--schema", str(schema), "-m", "laplace", "-e", "1", "--seed", "0",
                            "--out", str(out), *map(str, extra)], capsys)
    return code, err, out


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err and "error: error" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_the_delimiter_is_sniffed(tmp_path, capsys, schema, sep):
    """Pins a semicolon-separated file read as one column ('the input has no column(s) ...')."""
    data = tmp_path / "data.csv"
    _table().to_csv(data, sep=sep, index=False)
    code, err, out = _release(capsys, tmp_path, data, schema)
    assert code == 0, err
    assert list(pd.read_csv(out).columns) == ["age", "city", "label"]


def test_schema_draft_of_a_semicolon_file_has_every_column(tmp_path, capsys):
    """Pins `schema draft` returning 0 with a one-column schema on a semicolon-separated file."""
    data = tmp_path / "data.csv"
    _table().to_csv(data, sep=";", index=False)
    code, out, err = run_cli(["schema", "draft", str(data)], capsys)
    assert code == 0, err
    assert list(yaml.safe_load(out)["columns"]) == ["age", "city", "label"]


def test_sep_option_overrides_the_sniffing(tmp_path, capsys, schema):
    data = tmp_path / "data.csv"
    _table().to_csv(data, sep=";", index=False)
    code, err, _ = _release(capsys, tmp_path, data, schema, "--sep", ",")
    _one_line_error(code, err, "no column")
    code, err, _ = _release(capsys, tmp_path, data, schema, "--sep", "semicolon", "--overwrite")
    assert code == 0, err
    code, err, _ = _release(capsys, tmp_path, data, schema, "--sep", ";;", "--overwrite")
    _one_line_error(code, err, "--sep must be one character")


def test_latin1_file_names_encoding_then_reads_with_it(tmp_path, capsys, schema):
    """Pins a raw codec error ("'utf-8' codec can't decode byte 0xe9 ...") with no way to give the encoding."""
    data = tmp_path / "data.csv"
    _table().to_csv(data, index=False, encoding="latin-1")
    code, err, out = _release(capsys, tmp_path, data, schema)
    line = _one_line_error(code, err, "--encoding", "not UTF-8")
    assert "codec" not in line and not out.exists()
    code, err, out = _release(capsys, tmp_path, data, schema, "--encoding", "latin-1")
    assert code == 0, err
    assert set(pd.read_csv(out)["city"]) <= {"Zürich", "Genève"}


def test_parquet_named_csv_and_gzip_named_csv_are_read(tmp_path, capsys, schema):
    """Pins a codec error for a Parquet file named .csv (and for a gzip file named .csv)."""
    pq = tmp_path / "data.csv"
    _table().to_parquet(pq, index=False)
    code, err, _ = _release(capsys, tmp_path, pq, schema)
    assert code == 0, err
    gz = tmp_path / "gz.csv"
    gz.write_bytes(gzip.compress(_table().to_csv(index=False).encode()))
    code, err, _ = _release(capsys, tmp_path, gz, schema, "--overwrite")
    assert code == 0, err


def test_a_workbook_is_named_in_one_line(tmp_path, capsys, schema):
    data = tmp_path / "data.csv"
    data.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    code, err, _ = _release(capsys, tmp_path, data, schema)
    _one_line_error(code, err, "ZIP archive", "Excel")


def test_duplicate_column_names_are_reported_as_duplicates(tmp_path, capsys, schema):
    """Pins a duplicated header reported as a missing column (pandas renames the second 'age' to 'age.1')."""
    data = tmp_path / "data.csv"
    data.write_text("age,city,age,label\n" + "1,Zürich,2,no\n" * 10, encoding="utf-8")
    code, err, _ = _release(capsys, tmp_path, data, schema)
    _one_line_error(code, err, "['age'] more than once")


def test_corrupt_gzip_is_one_line_exit_2(tmp_path, capsys, schema):
    """Pins `error: error: Error -3 while decompressing data` with exit status 1."""
    data = tmp_path / "data.csv.gz"
    whole = gzip.compress(_table(2000).to_csv(index=False).encode())
    data.write_bytes(whole[: len(whole) // 2] + b"garbage" * 50)
    code, err, out = _release(capsys, tmp_path, data, schema)
    _one_line_error(code, err, "gzip data are damaged")
    assert not out.exists()


def test_yaml_error_gives_line_and_column(tmp_path, capsys):
    """Pins a YAML error without its position ('while parsing a flow mapping')."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("columns:\n  age: {type: numeric, lower: 0\n  x: [\n")
    code, _, err = run_cli(["schema", "check", str(bad)], capsys)
    _one_line_error(code, err, "line 3, column")


def test_empty_schema_and_swapped_arguments_in_the_clis_words(tmp_path, capsys, schema):
    """Pins 'got NoneType' for an empty schema and 'got str' for INPUT and --schema swapped."""
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    data = tmp_path / "data.csv"
    _table().to_csv(data, index=False)
    code, err, _ = _release(capsys, tmp_path, data, empty)
    line = _one_line_error(code, err, "is empty")
    assert "NoneType" not in line
    code, err, _ = _release(capsys, tmp_path, schema, data)
    line = _one_line_error(code, err, "looks like a data table", "--schema")
    assert "got str" not in line


@pytest.mark.parametrize("case", ["budget without ledger", "existing output", "out-of-bounds policy"])
def test_messages_name_flags_not_api_arguments(tmp_path, capsys, schema, case):
    """Pins `--overwrite (overwrite=True)` and `(--ledger FILE, or ledger=...)` in CLI messages."""
    data = tmp_path / "data.csv"
    _table().to_csv(data, index=False)
    if case == "existing output":
        (tmp_path / "out.csv").write_text("keep")
        code, err, _ = _release(capsys, tmp_path, data, schema)
        line = _one_line_error(code, err, "pass --overwrite to replace it")
    elif case == "out-of-bounds policy":
        code, err, _ = _release(capsys, tmp_path, data, schema, "--on-out-of-bounds", "drop")
        line = _one_line_error(code, err, "--on-out-of-bounds must be 'clip' or 'error'")
    else:
        code, err, _ = _release(capsys, tmp_path, data, schema, "--budget", "3")
        line = _one_line_error(code, err, "--budget need(s) a ledger (--ledger FILE)")
    assert "=True" not in line and "=..." not in line and "{{" not in line


def test_api_messages_name_arguments(tmp_path):
    """The same refusal in Python names the argument, not the flag."""
    from privrelease.errors import OutputError
    from privrelease.release import release_file
    from privrelease.schema import Schema

    data = tmp_path / "data.csv"
    _table().to_csv(data, index=False)
    (tmp_path / "out.csv").write_text("keep")
    with pytest.raises(OutputError, match=r"pass overwrite=True to replace it"):
        release_file(data, Schema.from_dict(SCHEMA), tmp_path / "out.csv", "laplace", 1.0, rng=0)


def test_out_into_a_missing_folder_is_refused(tmp_path, capsys, schema):
    """Pins `--out` into a folder that does not exist creating the folder silently."""
    data = tmp_path / "data.csv"
    _table().to_csv(data, index=False)
    led = tmp_path / "budget.sqlite"
    code, _, err = run_cli(["release", str(data), "--schema", str(schema), "-m", "laplace", "-e", "1", "--out",
                            str(tmp_path / "nowhere" / "out.csv"), "--ledger", str(led), "--dataset-id", "d",
                            "--budget", "3"], capsys)
    _one_line_error(code, err, "does not exist")
    assert not (tmp_path / "nowhere").exists()
    from privrelease.accounting.ledger import Ledger

    assert Ledger(led).history("d") == []


def test_privacy_parameters_print_compactly(tmp_path, capsys, schema):
    """Pins `delta=3.3333333333333333e-06` (full float precision) in the release's summary line."""
    data = tmp_path / "data.csv"
    _table(30_000).to_csv(data, index=False)
    code, _, err = run_cli(["release", str(data), "--schema", str(schema), "-e", "1", "--seed", "0",
                            "--out", str(tmp_path / "o.csv")], capsys)
    assert code == 0, err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("wrote ")]
    assert "epsilon=1, delta=3.33333e-06," in line, line


def test_a_ragged_csv_names_sep(tmp_path, capsys):
    data = tmp_path / "ragged.csv"
    data.write_text("a,b\n1,2\n3,4\n5,6,7\n")
    code, out, err = run_cli(["schema", "draft", str(data)], capsys)
    _one_line_error(code, err, "Expected 2 fields in line 4, saw 3", "--sep")
    assert out == ""


@pytest.mark.parametrize("command", ["report", "evaluate"])
def test_report_and_evaluate_outputs_into_a_missing_folder_are_refused(tmp_path, capsys, command):
    released = tmp_path / "released.csv"
    released.write_text("age\n1\n")
    target = tmp_path / "nowhere" / ("r.html" if command == "report" else "e.json")
    flag = "--out" if command == "report" else "--json"
    code, _, err = run_cli([command, "--example", "adult", str(released), flag, str(target)], capsys)
    _one_line_error(code, err, f"the folder of {flag}", "does not exist")
    assert not (tmp_path / "nowhere").exists()


def test_one_record_does_not_change_how_the_others_are_read(tmp_path):
    """The delimiter comes from the header line alone: a table and its neighbour with one record more
    are read with the same delimiter (before, a record in the first lines could flip it: below, the
    added record '1;2' breaks the comma's consistent split and the semicolon won)."""
    from privrelease.io.tables import csv_options

    rows = ["a;b,c", *["1;2,5"] * 10]
    d, d2 = tmp_path / "d.csv", tmp_path / "d2.csv"
    d.write_text("\n".join(rows) + "\n")
    d2.write_text("\n".join(rows[:3] + ["1;2"] + rows[3:]) + "\n")
    assert csv_options(d)["sep"] == csv_options(d2)["sep"]
