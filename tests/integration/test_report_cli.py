"""``privrelease report``: one self-contained HTML page that renders (checked in headless Chromium)."""

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


def test_report_is_one_self_contained_page(report_page, capsys):
    tmp = report_page
    page = (tmp / "report.html").read_text()
    body = page.split("<body>", 1)[1]
    assert body.lstrip().startswith('<div class="banner"') and "NOT FOR PUBLICATION" in body[:400]
    imgs = re.findall(r'<img [^>]*src="([^"]+)"', page)
    assert len(imgs) == len(SCHEMA["columns"]) + 2  # one per column, correlations, 2-way TVD
    assert all(src.startswith("data:image/png;base64,") for src in imgs)
    assert not re.search(r"(src|href)=\"(https?:|//)", page) and "<script" not in page and "<link" not in page
    cert = json.loads((tmp / "cert.json").read_text())
    assert cert["guarantee"] in page and "epsilon remaining" in page and "train on release" in page
    # an existing report is not replaced silently
    code, _, err = run_cli(["report", str(tmp / "real.csv"), str(tmp / "rel.csv"), "--schema", str(tmp / "schema.yaml"),
                            "--out", str(tmp / "report.html")], capsys)
    assert code == 2 and "--overwrite" in err


CHECK = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push('error: ' + (e.message || e.target.src)); }, true);
var _ce = console.error; console.error = function () { window.__errors.push('console: ' + [].join.call(arguments, ' ')); _ce.apply(console, arguments); };
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var bad = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; }).length;
  var out = document.createElement('pre'); out.id = 'render-check';
  out.textContent = 'IMAGES ' + imgs.length + ' BROKEN ' + bad + ' ERRORS ' + JSON.stringify(window.__errors);
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
    """Every figure decodes (naturalWidth > 0) and the console shows no error."""
    browser = _chromium()
    page = report_page / "report.html"
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("<head>", "<head>" + CHECK, 1))
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = re.search(r"IMAGES (\d+) BROKEN (\d+) ERRORS (\[.*?\])</pre>", proc.stdout)
    assert m, proc.stdout[-1000:] + proc.stderr[-2000:]
    n, broken, errors = int(m.group(1)), int(m.group(2)), json.loads(m.group(3).replace("&quot;", '"'))
    assert n == len(SCHEMA["columns"]) + 2 and broken == 0 and errors == []
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
    assert page.count("<img") >= 11  # one distribution figure per column at least
    code, _, err = run_cli(["report", "--example", "adult", "a.csv", str(tmp_path / "rel.csv"), "--out",
                            str(tmp_path / "r2.html")], capsys)
    assert code == 2 and "--example" in err and not (tmp_path / "r2.html").exists()
