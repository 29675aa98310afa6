"""``privrelease report``: one self-contained HTML page of vector figures that renders legibly (checked in headless
Chromium)."""

import json
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
import yaml

from cli_helpers import run_cli

SCHEMA = {"columns": {
    "age": {"type": "numeric", "lower": 0, "upper": 100, "integer": True},
    "score": {"type": "numeric", "lower": 0.0, "upper": 1.0},
    "color": {"type": "categorical", "categories": ["red", "green", "blue"]},
    "label": {"type": "categorical", "categories": ["no", "yes"], "role": "label"},
}}


def _table(n, seed):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    return pd.DataFrame({"age": age, "score": np.clip(age / 100 + rng.normal(0, 0.1, n), 0, 1),
                         "color": rng.choice(["red", "green", "blue"], n),
                         "label": np.where(age + rng.normal(0, 10, n) > 50, "yes", "no")})


def _run(args):
    """``privrelease ARGS`` in-process without capsys (module fixtures): the exit code."""
    from privrelease.cli.app import main

    try:
        main(list(args))
    except SystemExit as exc:
        return exc.code or 0
    return 0


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    """A release with its certificate and ledger, and the report of it (built once for the module)."""
    tmp = tmp_path_factory.mktemp("report")
    schema = tmp / "schema.yaml"
    schema.write_text(yaml.safe_dump(SCHEMA, sort_keys=False))
    _table(1500, 0).to_csv(tmp / "real.csv", index=False)
    _table(500, 1).to_csv(tmp / "test.csv", index=False)
    assert _run(["release", str(tmp / "real.csv"), "--schema", str(schema), "-m", "jiang-lda", "-e", "2", "--seed",
                 "0", "--out", str(tmp / "rel.csv"), "--certificate", str(tmp / "cert.json"), "--ledger",
                 str(tmp / "budget.sqlite"), "--dataset-id", "d", "--budget", "5"]) == 0
    assert _run(["report", str(tmp / "real.csv"), str(tmp / "rel.csv"), "--schema", str(schema), "--test",
                 str(tmp / "test.csv"), "--certificate", str(tmp / "cert.json"), "--ledger",
                 str(tmp / "budget.sqlite"), "--out", str(tmp / "report.html")]) == 0
    return tmp


N_FIGURES = len(SCHEMA["columns"]) + 3 + 1 + 3  # one per column, associations (3), 2-way TVD, correlations (3)


def test_report_is_one_self_contained_page(report_page, capsys):
    tmp = report_page
    page = (tmp / "report.html").read_text()
    body = page.split("<body>", 1)[1]
    assert body.lstrip().startswith('<div class="banner"') and "NOT FOR PUBLICATION" in body[:400]
    # vector figures with their text as text at 8 points or more (a colour bar's gradient is the only raster)
    assert page.count("<svg") == N_FIGURES and "<img" not in page
    assert page.count("<image") == 7  # the colour bars of the 7 heatmaps
    sizes = [float(s) for s in re.findall(r"font-size: ([0-9.]+)px", page)]
    assert sizes and min(sizes) >= 8 and ">age</text>" in page.replace("\n", "")
    assert not re.search(r"(src|href)=\"(https?:|//)", page) and "<script" not in page and "<link" not in page
    cert = json.loads((tmp / "cert.json").read_text())
    assert cert["guarantee"] in page and "epsilon remaining" in page and "Train on the release" in page
    for row in ("SDMetrics quality: overall", "KS, worst numeric column", "3-way TVD", "majority class for everyone",
                "Numeric columns, worst KS first", "Correlations of the encoded columns"):
        assert row in page, row
    assert "Left out of this report" not in page  # test, certificate and ledger given, SDMetrics on
    # an existing report is not replaced silently
    code, _, err = run_cli(["report", str(tmp / "real.csv"), str(tmp / "rel.csv"), "--schema", str(tmp / "schema.yaml"),
                            "--out", str(tmp / "report.html")], capsys)
    assert code == 2 and "--overwrite" in err


def test_report_without_test_says_what_it_leaves_out(report_page, capsys):
    tmp = report_page
    out = tmp / "short.html"
    code, _, err = run_cli(["report", str(tmp / "real.csv"), str(tmp / "rel.csv"), "--schema", str(tmp / "schema.yaml"),
                            "--no-sdmetrics", "--out", str(out)], capsys)
    assert code == 0, err
    left = out.read_text().split("Left out of this report", 1)[1].split("</div>", 1)[0]
    for reason in ("Train-on-release scores", "--test", "SDMetrics", "--no-sdmetrics", "certificate", "ledger"):
        assert reason in left, reason
    assert "Train on the release, test on real" not in out.read_text()


CHECK = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push('error: ' + (e.message || e.target.src)); }, true);
var _ce = console.error; console.error = function () { window.__errors.push('console: ' + [].join.call(arguments, ' ')); _ce.apply(console, arguments); };
window.addEventListener('load', function () {
  var figs = Array.prototype.slice.call(document.querySelectorAll('svg'));
  var empty = figs.filter(function (s) { var r = s.getBoundingClientRect(); return r.width < 50 || r.height < 50; }).length;
  var small = Array.prototype.slice.call(document.querySelectorAll('svg text')).filter(function (t) {
    var r = t.getBoundingClientRect(); return r.width > 0 && parseFloat(getComputedStyle(t).fontSize) * s(t) < 10; }).length;
  function s(t) { var m = t.getScreenCTM(); return m ? Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)) : 1; }
  var out = document.createElement('pre'); out.id = 'render-check';
  out.textContent = 'FIGURES ' + figs.length + ' EMPTY ' + empty + ' SMALLTEXT ' + small + ' ERRORS ' + JSON.stringify(window.__errors);
  document.body.appendChild(out);
});
</script>"""


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium is not installed (Debian: apt-get install -y chromium)")


def test_report_renders_in_headless_chromium(report_page, tmp_path):
    """Every figure lays out at a visible size, no label is drawn below 10 CSS pixels (7.5 points) on screen,
    and the console shows no error."""
    browser = _chromium()
    page = report_page / "report.html"
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("<head>", "<head>" + CHECK, 1))
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
         "--window-size=1400,4000", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = re.search(r"FIGURES (\d+) EMPTY (\d+) SMALLTEXT (\d+) ERRORS (\[.*?\])</pre>", proc.stdout)
    assert m, proc.stdout[-1000:] + proc.stderr[-2000:]
    n, empty, small = int(m.group(1)), int(m.group(2)), int(m.group(3))
    errors = json.loads(m.group(4).replace("&quot;", '"'))
    assert n == N_FIGURES and empty == 0 and small == 0 and errors == []
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line and "probe.html" in line]
    assert console == [], console


def test_report_on_the_bundled_example(tmp_path, capsys):
    """The quick start's report: ``--example adult RELEASED`` takes the bundled real table, schema and test file;
    giving REAL as well is refused with one line."""
    from privrelease.datasets import load_example

    df, _ = load_example("adult")
    df.sample(3000, random_state=0).to_csv(tmp_path / "rel.csv", index=False)  # stands in for a release
    code, _, err = run_cli(["report", "--example", "adult", str(tmp_path / "rel.csv"), "--out",
                            str(tmp_path / "r.html")], capsys)
    assert code == 0, err
    page = (tmp_path / "r.html").read_text()
    assert "NOT for publication" in page or "not for publication" in page.lower()
    assert page.count("<svg") >= 11  # one distribution figure per column at least
    code, _, err = run_cli(["report", "--example", "adult", "a.csv", str(tmp_path / "rel.csv"), "--out",
                            str(tmp_path / "r2.html")], capsys)
    assert code == 2 and "--example" in err and not (tmp_path / "r2.html").exists()
