"""Generated tables and schemas (``generated_tables.py``) released by every mechanism whose declared
capabilities they need, through the command line, the streamed command line and the Python API.

Every run either releases a table that meets its schema, or refuses in one line of the command
line's own words (the API: a PrivReleaseError); a refusal writes nothing and charges nothing.
CI runs ``CI_EXAMPLES`` cases, derandomized; ``-m slow`` runs ``SLOW_EXAMPLES`` (docs/testing.md).
"""

import re
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings

from cli_helpers import run_cli
from generated_tables import cases, check_release, refusal_line
from privrelease import Synthesizer
from privrelease.accounting.ledger import Ledger
from privrelease.dp.costs import PrivacyCost
from privrelease.errors import PrivReleaseError
from privrelease.schema import Schema

CI_EXAMPLES = 300
SLOW_EXAMPLES = 3000
BUDGET = PrivacyCost(1000.0, 0.5)


def _setup(case, folder: Path):
    data, schema, led = folder / "table.csv", folder / "schema.yaml", folder / "ledger.sqlite"
    case.table.to_csv(data, index=False)
    schema.write_text(yaml.safe_dump(case.schema, sort_keys=False))
    Ledger(led).declare("d", BUDGET)
    return data, schema, led


def _spent(led: Path):
    """The dataset's spent budget and its entries not cancelled (a refusal after the reservation cancels it)."""
    ledger = Ledger(led)
    return ledger.spent("d"), sum(e["status"] != "cancelled" for e in ledger.history("d"))


def _run_cli(case, folder: Path, capsys):
    data, schema, led = _setup(case, folder)
    before = set(folder.iterdir())
    out, cert = folder / "released.csv", folder / "cert.json"
    args = ["release", str(data), "--schema", str(schema), "-m", case.mechanism, "-e", str(case.epsilon),
            "--seed", str(case.seed), "--out", str(out), "--certificate", str(cert), "--ledger", str(led),
            "--dataset-id", "d", "--chunk-rows", str(case.chunk_rows)]
    args += [f"--n-synthetic={case.n_synthetic}"] if case.n_synthetic is not None else []
    args += [a for k, v in case.params.items() for a in ("--param", f"{k}={v}")]
    code, _, err = run_cli(args, capsys)
    assert not re.search(r"\.py:\d+: \w*Warning", err), f"a Python warning on the console: {err}"
    spent, entries = _spent(led)
    if code == 0:
        assert out.exists() and cert.exists(), err
        assert spent.epsilon == pytest.approx(case.epsilon) and entries == 1, (spent, err)
        check_release(case, pd.read_csv(out, dtype=str, keep_default_na=False))
        event(f"{case.path}: released")
        return
    event(f"{case.path}: refused: {_gist(refusal_line(code, err))}")
    left = set(folder.iterdir()) - before - {folder / f"ledger.sqlite{s}" for s in ("-wal", "-shm", "-journal")}
    assert not left, f"a refused release left {sorted(p.name for p in left)}: {err}"
    assert spent.epsilon == 0 and spent.delta == 0 and entries == 0, (spent, entries, err)


def _gist(line: str) -> str:
    """A refusal's kind for the statistics (``--hypothesis-show-statistics``): its words without names and numbers."""
    return re.sub(r"'[^']*'|\[[^\]]*\]|[-+.\w/]*\d[-+.\w/]*", "_", line)[7:70]


def _as_text(df: pd.DataFrame) -> pd.DataFrame:
    return df.astype(object).where(df.notna(), "").astype(str)


def _run_api(case, folder: Path):
    data, _, led = _setup(case, folder)
    df = pd.read_csv(data)
    syn = Synthesizer(case.schema, mechanism=case.mechanism, epsilon=case.epsilon, rng=case.seed, ledger=led,
                      dataset_id="d", **case.params)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            syn.fit(df)
    except PrivReleaseError as exc:
        assert "\n" not in str(exc), str(exc)
        event(f"api: refused: {_gist('error: ' + str(exc))}")
        spent, entries = _spent(led)
        assert spent.epsilon == 0 and entries == 0, (spent, entries, str(exc))
        return
    spent, entries = _spent(led)
    assert spent.epsilon == pytest.approx(case.epsilon) and entries == 1, spent
    fitted = type(case)(**{**case.__dict__, "n_synthetic": None})
    check_release(fitted, _as_text(syn.released_))
    event("api: released")
    if case.n_synthetic is not None:
        check_release(case, _as_text(syn.sample(case.n_synthetic)))


def _check_case(case, capsys):
    with tempfile.TemporaryDirectory() as d:
        if case.path == "api":
            _run_api(case, Path(d))
        else:
            _run_cli(case, Path(d), capsys)


_COMMON = dict(deadline=None, derandomize=True, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                      HealthCheck.data_too_large])


@settings(max_examples=CI_EXAMPLES, **_COMMON)
@given(case=cases())
def test_generated_release_meets_its_schema_or_refuses_in_one_line(case, capsys):
    _check_case(case, capsys)


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES, **_COMMON)
@given(case=cases())
def test_generated_release_meets_its_schema_or_refuses_in_one_line_slow(case, capsys):
    _check_case(case, capsys)


def test_the_checks_catch_a_broken_release_and_an_internal_error():
    """The property can fail: each way a release can break its schema, and an internal error's line, is caught."""
    from generated_tables import Case

    schema = {"columns": {"x": {"type": "numeric", "lower": 0, "upper": 1, "step": 0.25, "missing": "allowed"},
                          "n": {"type": "numeric", "lower": 0, "upper": 9, "integer": True},
                          "t": {"type": "datetime", "lower": "2020-01-01", "upper": "2020-02-01", "step": "hour"},
                          "c": {"type": "categorical", "categories": ["a", "b"], "role": "label"},
                          "m": {"type": "categorical", "categories": ["a"], "missing": "allowed"}}}
    case = Case(pd.DataFrame({"x": ["0.5"], "n": ["3"], "t": ["2020-01-02"], "c": ["a"], "m": [None]}), schema,
                "laplace", "cli", 1.0, 200_000, None, 0)
    good = pd.DataFrame({"x": ["0.25", ""], "n": ["3", "9"], "t": ["2020-01-05T13:00", "2020-02-01T00:00"],
                         "c": ["a", "b"], "m": ["a", ""]})
    case.table = pd.concat([case.table] * 2, ignore_index=True)
    check_release(case, good)
    broken = [good.assign(x=["0.3", ""]), good.assign(x=["0.2500000001", ""]), good.assign(x=["1.25", ""]),
              good.assign(n=["3", ""]), good.assign(n=["3.5", "9"]), good.assign(t=["2020-01-05T13:30", ""]),
              good.assign(t=["2020-01-05T13:00", "2020-03-01T00:00"]), good.assign(c=["a", "(other)"]),
              good.assign(m=["a", "allowed"]), good.assign(extra=["1", "2"]), good[["n", "x", "t", "c", "m"]],
              good.head(1)]
    for table in broken:
        with pytest.raises(AssertionError):
            check_release(case, table)
    for code, err in ((1, "releasing t.csv\nerror: TypeError: cannot unpack (run with --debug for the traceback)"),
                      (2, "error: one\nerror: two"), (0, ""), (1, "Traceback (most recent call last):\nerror: x")):
        with pytest.raises(AssertionError):
            refusal_line(code, err)
    assert refusal_line(2, "releasing t.csv\nerror: the input has 1 record") == "error: the input has 1 record"


def _one_column(kind: str):
    g = np.random.default_rng(0)
    if kind == "target":  # the shape that once crashed modips's one-column inverse-Wishart draw
        spec = {"type": "numeric", "lower": 0, "upper": 10, "role": "target"}
        return {"columns": {"y": spec}}, pd.DataFrame({"y": [f"{v:.3f}" for v in g.uniform(0, 10, 300)]})
    spec = {"type": "categorical", "categories": ["a", "b", "c"], "role": "label"}
    return {"columns": {"y": spec}}, pd.DataFrame({"y": g.choice(["a", "b", "c"], 300)})


@pytest.mark.parametrize("kind", ["target", "label"])
def test_a_table_whose_one_column_is_its_target_or_label_releases_or_refuses_in_one_line(kind, capsys, monkeypatch):
    """Fixed examples beside the drawn ones: every mechanism able to take it, through the command line."""
    from generated_tables import PARAMS, Case, needs_met, releasable_mechanisms

    monkeypatch.setitem(globals(), "event", lambda *_: None)  # hypothesis's statistics exist inside its tests only

    schema, table = _one_column(kind)
    parsed = Schema.from_dict(schema)
    able = [m for m in releasable_mechanisms() if needs_met(m, parsed)]
    assert able
    for cls in able:
        _check_case(Case(table, schema, cls.name, "cli", 1.0, 200_000, None, 0, dict(PARAMS.get(cls.name, {}))),
                    capsys)
