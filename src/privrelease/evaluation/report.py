"""A self-contained HTML quality report of a release: measures, figures, certificate, ledger.

:func:`build_report` returns ONE HTML document with every figure inlined as SVG (vector, text
kept as text: :mod:`privrelease.evaluation.figures`) and no external resource, script or font,
so it opens offline in any browser. It reads the real (private) table, like
:func:`~privrelease.evaluation.fidelity.evaluate`, whose measures it shows:

* the headline measures, SDMetrics' scores among them, and the train-on-release scores beside
  the real-data reference and the majority-class rate;
* each numeric column's KS, W1 / range, quantiles, atom and missing shares, worst KS first;
* each column's real and released shares over the public cells (side-by-side bars) and, for
  numeric columns, both distribution functions, worst column first;
* the association (Cramer's V over the 2-way cells) of every pair of columns in the real and the
  released table and its difference; the Pearson correlations of the encoded columns (one-hot
  levels) when there are few enough to label; the 2-way TVD of every pair on a data-driven colour
  scale; the worst (pair, label) triples of the 3-way TVD;
* the certificate's guarantee, budget and schema provenance, and the ledger's state.

What is left out (no ``--test``, no certificate, SDMetrics skipped, too many encoded columns to
label) is said in a line near the top, with the reason. A banner at the top says that the page
shows statistics of the private data and is not for publication.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from ..schema import Schema
from .cells import as_read, cell_codes, is_datetime
from .fidelity import (
    PRIVATE_NOTICE,
    TSTR_MODELS,
    Evaluation,
    _corr,
    _design,
    _one_thread,
    evaluate_read,
)
from .figures import _date, cell_labels, clip, column_figure, cramers_v, heatmap_figure

BANNER = ("PRIVATE - NOT FOR PUBLICATION. This report shows statistics computed from the real (private) "
          "data: its plots and numbers are NOT differentially private. Keep it with the data custodian; "
          "publish only the released table and its certificate.")
MAX_ENCODED = 50  # encoded columns (numeric + one-hot levels) up to which their correlations are drawn
#: The issue-20 targets the per-column table marks: KS, quantile error, atom gap.
TARGETS = {"ks": 0.10, "quantile": 0.10, "atom": 0.02}

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0 auto;max-width:1200px;
padding:0 1em 3em;color:#222}
.banner{background:#b00020;color:#fff;padding:.8em 1em;font-weight:600;position:sticky;top:0;margin:0 -1em 1em;
z-index:2}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}td.bad{background:#fbd5d5}
.scroll{overflow-x:auto;max-width:100%}.figs{display:flex;flex-wrap:wrap;gap:.5em 2em}
.figs figure{margin:0 0 1em;max-width:100%}figcaption{font-size:.9em;color:#444}td.name{white-space:nowrap}
dl.defs{display:grid;grid-template-columns:max-content auto;gap:.15em 1em;margin:.3em 0}dl.defs dt{font-weight:600}
dl.defs dd{margin:0}dl.defs dl.defs{margin:0}svg{display:block;height:auto}code{background:#f3f3f3;padding:0 .2em}.leftout{background:#fff6d6;padding:.5em 1em}
"""


def _esc(x) -> str:
    return html.escape(str(x))


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        return "-" if not np.isfinite(v) else f"{v:.4g}"
    return _esc(v)


def _table(rows, header=None, bad=None) -> str:
    """An HTML table (first column unwrapped, numbers right-aligned) in a box that scrolls sideways when the
    table is wider than the page; ``bad``: (row, column) cells to mark."""
    def cell(v, tag, classes):
        if isinstance(v, (float, int, np.floating)) and not isinstance(v, bool):
            classes = classes + ["num"]
        attr = f' class="{" ".join(classes)}"' if classes else ""
        return f"<{tag}{attr}>{_fmt(v)}</{tag}>"

    head = "<tr>" + "".join(cell(h, "th", []) for h in header) + "</tr>" if header else ""
    body = "".join("<tr>" + "".join(cell(v, "td", (["name"] if c == 0 else []) + (["bad"] if (r, c) in (bad or ())
                                                                                    else []))
                                    for c, v in enumerate(row)) + "</tr>" for r, row in enumerate(rows))
    return '<div class="scroll"><table>' + head + body + "</table></div>"


def _summary_rows(ev: Evaluation) -> list:
    s = ev.summary()
    worst = max(ev.tvd_1way, key=ev.tvd_1way.get)
    rows = [("1-way TVD, mean over columns", ev.tvd_1way_mean),
            (f"1-way TVD, worst column ({worst})", ev.tvd_1way[worst])]
    if ev.numeric:
        top = next(iter(ev.numeric))
        rows += [(f"KS, worst numeric column ({top})", s["ks_max"]), ("KS, mean over numeric columns", s["ks_mean"]),
                 ("W1 / range, worst numeric column", s["w1_range_max"]),
                 ("quantile error (median, p90, p99), worst", s["quantile_error_max"]),
                 ("atom share gap, worst", s["atom_gap_max"])]
    rows.append(("2-way TVD, mean over pairs", ev.tvd_2way_mean))
    if ev.tvd_3way:
        rows.append((f"3-way TVD (pair, label {ev.label_3way}), mean over pairs", ev.tvd_3way_mean))
    rows.append(("correlation difference (mean |r_real - r_released|)", ev.correlation_difference))
    for name, c in (ev.calendar or {}).items():
        rows += [(f"TVD of {name}'s {k.replace('_', ' ')}", v) for k, v in c.items()]
    for k, v in (ev.sdmetrics or {}).items():
        rows.append((f"SDMetrics quality: {k.replace('_', ' ')}", v))
    for k, v in (ev.constraints or {}).items():
        rows.append((f"rows holding {k}: released (real {v['real']:.3f})", v["released"]))
    return rows


def _tstr_section(ev: Evaluation) -> str:
    second = "auc" if "auc" in ev.tstr[TSTR_MODELS[0]] else "macro_f1"
    rows = []
    for who, res in (("the release", ev.tstr), ("the real table", ev.tstr_real)):
        for model in TSTR_MODELS if res else ():
            rows.append((f"{model.replace('_', ' ')} trained on {who}", res[model]["accuracy"], res[model][second]))
    rows.append(("majority class for everyone", ev.majority_rate, 0.5 if second == "auc" else float("nan")))
    return ("<h2>Train on the release, test on real records</h2>"
            f"<p>{ev.n_test:,} real held-out records, label <code>{_esc(ev.label)}</code>. The majority-class "
            "rate is the accuracy of predicting the real table's most frequent label for everyone.</p>"
            + (f"<p class='leftout'>{_esc(ev.below_majority_warning())}</p>" if ev.below_majority_warning() else "")
            + _table(rows, ("model", "accuracy", "AUC" if second == "auc" else "macro-F1")))


def _numeric_section(ev: Evaluation, schema: Schema) -> str:
    rows, bad = [], set()
    any_missing = any(m["missing"]["real"] or m["missing"]["released"] for m in ev.numeric.values())
    for r, (name, m) in enumerate(ev.numeric.items()):
        col = schema[name]
        val = (lambda v: _date(col, v) if np.isfinite(v) else "-") if is_datetime(col) else (lambda v: v)
        row = [name, m["ks"], m["w1_range"]]
        for q in m["quantiles"].values():
            row += [val(q["real"]), val(q["released"])]
            if q["error"] > TARGETS["quantile"]:
                bad.add((r, len(row) - 1))
        atom = max(m["atoms"], key=lambda a: abs(a["released"] - a["real"]), default=None)
        row += [val(atom["value"]), f"{atom['real']:.1%}", f"{atom['released']:.1%}"] if atom else ["none", "", ""]
        if m["atom_gap"] > TARGETS["atom"]:
            bad.add((r, len(row) - 1))
        if any_missing:
            row += [f"{m['missing']['real']:.1%}", f"{m['missing']['released']:.1%}"]
        if m["ks"] > TARGETS["ks"]:
            bad.add((r, 1))
        rows.append(row)
    header = ("column", "KS", "W1 / range", "median real", "released", "p90 real", "released", "p99 real",
              "released", "atom moved most", "real share", "released share") + (
                  ("missing real", "released") if any_missing else ())
    return ("<h2>Numeric columns, worst KS first</h2><p>KS: largest gap between the real and released "
            "distribution functions. W1 / range: how far values move on average, as a share of the public range. "
            f"Marked: KS above {TARGETS['ks']}, a quantile more than {TARGETS['quantile']:.0%} off the real one "
            f"(or one step where the real one is 0), an atom (a value held by at least 1 % of the real records) "
            f"whose share moved by more than {TARGETS['atom'] * 100:.0f} percentage points."
            + ("" if any_missing else " No numeric value is missing in either table.") + "</p>"
            + _table(rows, header, bad))


def _column_order(ev: Evaluation) -> list[str]:
    """Columns worst first: numeric by the larger of KS and 1-way TVD, categorical by 1-way TVD."""
    score = {n: max(v, ev.numeric[n]["ks"]) if n in ev.numeric else v for n, v in ev.tvd_1way.items()}
    return sorted(score, key=lambda n: -score[n])


def _columns_section(ev: Evaluation, real: pd.DataFrame, released: pd.DataFrame, schema: Schema) -> str:
    r, cards = cell_codes(real, schema, ev.bins_1way)
    s, _ = cell_codes(released, schema, ev.bins_1way)
    parts = ["<h2>Each column, worst first</h2>",
             f"<p>Shares of records per public cell (numeric columns in {ev.bins_1way} equal-width bins over the "
             "schema's bounds, categorical columns at their declared levels: the cells of the 1-way TVD), real and "
             "released side by side; numeric columns also show both distribution functions.</p>",
             '<div class="figs">']
    for name in _column_order(ev):
        j = schema.names.index(name)
        c = schema[name]
        pr = np.bincount(r[:, j], minlength=cards[j]) / len(r)
        ps = np.bincount(s[:, j], minlength=cards[j]) / len(s)
        num = c.kind == "numeric"
        img = column_figure(c, pr, ps, cell_labels(c, ev.bins_1way), real[name] if num else None,
                            released[name] if num else None)
        cap = f"{_esc(name)}: 1-way TVD {ev.tvd_1way[name]:.3f}" + (
            f", KS {ev.numeric[name]['ks']:.3f}" if num else "")
        parts.append(f'<figure><div class="scroll">{img}</div><figcaption>{cap}</figcaption></figure>')
    parts.append("</div>")
    return "\n".join(parts)
def _certificate_section(cert: dict) -> str:
    keys = ("mechanism", "guarantee", "neighbouring_relation", "epsilon", "delta", "delta_source",
            "n_input_records", "n_output_records", "randomness", "package_version", "created_utc", "output_sha256")
    rows = [(k, cert[k] if not isinstance(cert.get(k), float) else float(cert[k])) for k in keys if k in cert]
    parts = ["<h2>Privacy certificate</h2>", _table(rows)]
    if cert.get("budget_split"):
        parts += ["<h3>Budget split</h3>", _table(sorted(cert["budget_split"].items()))]
    if cert.get("schema_provenance"):
        parts += ["<h3>Schema provenance</h3>", _definitions(cert["schema_provenance"])]
    if cert.get("notes"):
        parts += ["<h3>Notes</h3><ul>" + "".join(f"<li>{html.escape(str(n))}</li>" for n in cert["notes"]) + "</ul>"]
    return "\n".join(parts)


def _definitions(d: dict) -> str:
    """A mapping as a definition list (keys in words, nested mappings as nested lists, lists of plain
    values joined by commas, an empty value as "none")."""
    def value(v) -> str:
        if isinstance(v, dict):
            return _definitions(v) if v else "none"
        if isinstance(v, (list, tuple)):
            if not v:
                return "none"
            if all(not isinstance(x, (dict, list, tuple)) for x in v):
                return ", ".join(_fmt(x) for x in v)
            return "<ul>" + "".join(f"<li>{value(x)}</li>" for x in v) + "</ul>"
        return "none" if v is None else _fmt(v)

    return ('<dl class="defs">' + "".join(f"<dt>{_esc(str(k).replace('_', ' '))}</dt><dd>{value(v)}</dd>"
                                          for k, v in d.items()) + "</dl>")


def _ledger_section(summaries: list[dict]) -> str:
    rows = [(s["dataset_id"], float(s["epsilon_total"]), float(s["epsilon_spent"]), float(s["epsilon_remaining"]),
             float(s.get("delta_total") or 0.0), float(s.get("delta_spent") or 0.0), s["n_committed"], s["n_pending"])
            for s in summaries]
    header = ("dataset", "epsilon total", "epsilon spent", "epsilon remaining", "delta total", "delta spent",
              "committed", "pending")
    return "<h2>Ledger</h2>" + (_table(rows, header) if rows else "<p>The ledger holds no dataset.</p>")


def _association_section(ev: Evaluation, real: pd.DataFrame, released: pd.DataFrame, schema: Schema) -> str:
    r, cards = cell_codes(real, schema, ev.bins_2way)
    s, _ = cell_codes(released, schema, ev.bins_2way)
    vr, vs = cramers_v(r, cards), cramers_v(s, cards)
    diff = np.abs(vr - vs)
    labels = [clip(n) for n in schema.names]
    top = float(np.nanmax(diff)) if np.isfinite(diff).any() else 0.0
    return "\n".join([
        "<h2>Association between columns</h2>",
        f"<p>Cramér's V of every pair of columns over the cells of the 2-way TVD ({ev.bins_2way} bins per numeric "
        "column, declared levels): 0 for independent columns, 1 when one determines the other. Blank: the "
        "diagonal, and a column that holds a single cell in that table (V is undefined there). The difference is "
        f"drawn on its own scale, 0 to its largest value ({top:.3f}).</p>",
        '<div class="figs">',
        f'<div class="scroll">{heatmap_figure(vr, labels, "real table", 0, 1, "Blues", "Cramér V")}</div>',
        f'<div class="scroll">{heatmap_figure(vs, labels, "released table", 0, 1, "Blues", "Cramér V")}</div>',
        f'<div class="scroll">{heatmap_figure(diff, labels, "|real - released|", 0, max(top, 1e-3), "Reds", "|ΔV|")}'
        "</div></div>"])


def _encoded_labels(schema: Schema) -> list[str]:
    out = []
    for c in schema.columns:
        out += [clip(c.name)] if c.kind == "numeric" else [clip(f"{c.name}={v}") for v in c.categories]
    return out


def correlation_matrices(real: pd.DataFrame, released: pd.DataFrame, schema: Schema):
    """Pearson correlations of the encoded real and released tables and their absolute difference, ``nan`` on
    the diagonal and for an encoded column constant in either table (a level absent from it)."""
    Xr, _ = _design(real, schema)
    Xs, _ = _design(released, schema)
    with _one_thread():
        Cr, Cs = _corr(Xr), _corr(Xs)
    for X, C in ((Xr, Cr), (Xs, Cs)):
        const = X.std(axis=0) <= 1e-12 * np.maximum(np.abs(X).max(axis=0), 1.0)
        C[const, :] = np.nan
        C[:, const] = np.nan
        np.fill_diagonal(C, np.nan)
    return Cr, Cs, np.abs(Cr - Cs)


def _correlation_section(real: pd.DataFrame, released: pd.DataFrame, schema: Schema) -> str:
    Cr, Cs, D = correlation_matrices(real, released, schema)
    top = float(np.nanmax(D)) if np.isfinite(D).any() else 0.0
    labels = _encoded_labels(schema)
    return "\n".join([
        "<h2>Correlations of the encoded columns</h2>",
        "<p>Pearson correlation of the encoded columns (numeric values, one column per categorical level), the "
        "measure behind the correlation difference. Blank: the diagonal, and a level absent from (constant in) "
        f"that table. The difference is drawn on its own scale, 0 to {top:.3f}.</p>",
        '<div class="figs">',
        f'<div class="scroll">{heatmap_figure(Cr, labels, "real table", -1, 1, "RdBu_r", "Pearson r")}</div>',
        f'<div class="scroll">{heatmap_figure(Cs, labels, "released table", -1, 1, "RdBu_r", "Pearson r")}</div>',
        f'<div class="scroll">{heatmap_figure(D, labels, "|real - released|", 0, max(top, 1e-3), "Reds", "|Δr|")}'
        "</div></div>"])


def _pair_matrix(pairs: dict, names: list[str]) -> np.ndarray:
    M = np.full((len(names), len(names)), np.nan)
    idx = {n: i for i, n in enumerate(names)}
    for (a, b), v in pairs.items():
        M[idx[a], idx[b]] = M[idx[b], idx[a]] = v
    return M


def _tvd_section(ev: Evaluation, schema: Schema) -> str:
    top = max(ev.tvd_2way.values())
    parts = ["<h2>2-way TVD of every pair of columns</h2>",
             f"<p>{ev.bins_2way} bins per numeric column; the colour scale runs from 0 to the largest pair's TVD "
             f"({top:.3f}), so differences between pairs show even in a good release.</p>",
             '<div class="scroll">' + heatmap_figure(_pair_matrix(ev.tvd_2way, schema.names),
                                                     [clip(n) for n in schema.names], "2-way TVD", 0,
                                                     max(top, 1e-3), "viridis", "TVD") + "</div>"]
    if ev.tvd_3way:
        worst = sorted(ev.tvd_3way.items(), key=lambda kv: -kv[1])[:15]
        parts += [f"<h2>3-way TVD: the worst (pair, {_esc(ev.label_3way)}) triples</h2>",
                  f"<p>Mean over {len(ev.tvd_3way):,} pairs {ev.tvd_3way_mean:.3f}; the {len(worst)} worst:</p>",
                  _table([(a, b, v) for (a, b), v in worst], ("column", "column", "3-way TVD"))]
    return "\n".join(parts)


def _left_out(ev: Evaluation, sdmetrics: bool, certificate, ledger, schema: Schema) -> list[str]:
    out = []
    if ev.tstr is None:
        out.append("Train-on-release scores (and the majority-class rate): they need real records the release "
                   "never saw; give them with --test.")
    if not sdmetrics:
        out.append("SDMetrics' quality scores: skipped on request (--no-sdmetrics).")
    if ev.tvd_3way is None:
        out.append("The 3-way TVD: the schema has no label column (role: label) and none was given with --label, "
                   "or fewer than three columns.")
    n_enc = len(_encoded_labels(schema))
    if n_enc > MAX_ENCODED:
        out.append(f"The correlation heatmaps of the encoded columns: {n_enc} encoded columns (numeric columns and "
                   f"one per categorical level) are too many to label legibly (at most {MAX_ENCODED}); the "
                   "association heatmaps cover every pair of columns and the correlation difference is in the table.")
    if certificate is None:
        out.append("The privacy certificate: no --certificate was given.")
    if ledger is None:
        out.append("The ledger's state: no --ledger was given.")
    return out


def build_report(real: pd.DataFrame, released: pd.DataFrame, schema: Schema, *, test: pd.DataFrame | None = None,
                 label: str | None = None, certificate: dict | None = None, ledger: list[dict] | None = None,
                 sdmetrics: bool = True, title: str = "privrelease quality report") -> str:
    """The report as one self-contained HTML string (reads the private ``real`` table: not for publication)."""
    real, test = as_read(real, schema), None if test is None else as_read(test, schema)
    ev = evaluate_read(real, released, schema, test=test, label=label, sdmetrics=sdmetrics)
    left = _left_out(ev, sdmetrics, certificate, ledger, schema)
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        f'<div class="banner" role="alert">{_esc(BANNER)}</div>', f"<h1>{_esc(title)}</h1>",
        f"<p>Real table: {ev.n_real:,} records; released table: {ev.n_released:,} records"
        + (f"; held-out test table: {ev.n_test:,} records (label <code>{_esc(ev.label)}</code>)"
           if ev.n_test is not None else "") + f". <em>{_esc(PRIVATE_NOTICE)}</em>.</p>",
    ]
    if left:
        parts.append('<div class="leftout"><strong>Left out of this report:</strong><ul>'
                     + "".join(f"<li>{_esc(x)}</li>" for x in left) + "</ul></div>")
    parts += ["<h2>Summary</h2>", _table(_summary_rows(ev), ("measure", "value"))]
    if ev.tstr is not None:
        parts.append(_tstr_section(ev))
    if ev.numeric:
        parts.append(_numeric_section(ev, schema))
    if certificate is not None:
        parts.append(_certificate_section(certificate))
    if ledger is not None:
        parts.append(_ledger_section(ledger))
    parts.append(_columns_section(ev, real, released, schema))
    if len(schema.columns) >= 2:
        parts += [_association_section(ev, real, released, schema), _tvd_section(ev, schema)]
    if len(_encoded_labels(schema)) <= MAX_ENCODED:
        parts.append(_correlation_section(real, released, schema))
    parts.append("</body></html>")
    return "\n".join(parts)
