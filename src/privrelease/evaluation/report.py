"""A self-contained HTML quality report of a release: plots, utility table, certificate, ledger.

:func:`build_report` returns ONE HTML document with every figure inlined as a base64 PNG
(matplotlib's Agg canvas, no pyplot state) and no external resource, script or font, so it
opens offline in any browser. It reads the real (private) table, like
:func:`~privrelease.evaluation.fidelity.evaluate`, whose cells and measures it plots:

* each column's real and released distribution overlaid, over the same public cells as
  the 1-way TVD (bins over the schema's bounds, declared levels, one "none" cell);
* the correlation matrices of the encoded real and released tables and their difference;
* the 2-way TVD of every pair of columns as a heatmap;
* the utility table (TVDs, correlation difference, SDMetrics, train-on-release scores);
* the certificate's guarantee, budget and schema provenance, and the ledger's state.

A banner at the top says that the page shows statistics of the private data and is not
for publication.
"""

from __future__ import annotations

import base64
import html
import io
import json

import numpy as np
import pandas as pd

from ..errors import shorten
from ..schema import Schema
from .fidelity import PRIVATE_NOTICE, Evaluation, _cell_codes, _corr, _design, _one_thread, evaluate

BANNER = ("PRIVATE - NOT FOR PUBLICATION. This report shows statistics computed from the real (private) "
          "data: its plots and numbers are NOT differentially private. Keep it with the data custodian; "
          "publish only the released table and its certificate.")

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0 auto;max-width:1100px;
padding:0 1em 3em;color:#222}
.banner{background:#b00020;color:#fff;padding:.8em 1em;font-weight:600;position:sticky;top:0;margin:0 -1em 1em}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.figs{display:flex;flex-wrap:wrap;gap:.5em}.figs figure{margin:0}figcaption{font-size:.85em;color:#555}
img{max-width:100%;height:auto}code{background:#f3f3f3;padding:0 .2em}
"""


def _png(fig) -> str:
    """A matplotlib Figure as an ``<img>`` with a base64 PNG data URI."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def _figure(w: float, h: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h))


def _cell_labels(c, bins: int) -> list[str]:
    if c.kind == "numeric":
        edges = np.linspace(c.lower, c.upper, bins + 1)
        return ["none"] + [f"{(a + b) / 2:.3g}" for a, b in zip(edges[:-1], edges[1:])]
    return ["none"] + [shorten(v, 24).strip("'") for v in c.categories]


def column_figures(real: pd.DataFrame, released: pd.DataFrame, schema: Schema, bins: int = 20) -> list[tuple[str, str]]:
    """``(column, <img>)`` per column: real and released shares over the 1-way TVD's cells, overlaid."""
    r, cards = _cell_codes(real, schema, bins)
    s, _ = _cell_codes(released, schema, bins)
    out = []
    for j, c in enumerate(schema.columns):
        k = cards[j]
        pr = np.bincount(r[:, j], minlength=k) / len(r)
        ps = np.bincount(s[:, j], minlength=k) / len(s)
        keep = np.ones(k, dtype=bool)
        keep[0] = pr[0] > 0 or ps[0] > 0  # the "none" cell only when something falls in it
        labels = np.array(_cell_labels(c, bins))[keep]
        x = np.arange(keep.sum())
        fig = _figure(max(4.0, min(11.0, 0.35 * len(x) + 2)), 2.8)
        ax = fig.add_subplot()
        if c.kind == "numeric":
            ax.bar(x, pr[keep], width=1.0, alpha=0.45, label="real", color="#1f77b4")
            ax.bar(x, ps[keep], width=1.0, alpha=0.45, label="released", color="#d62728")
        else:
            ax.bar(x - 0.2, pr[keep], width=0.4, label="real", color="#1f77b4")
            ax.bar(x + 0.2, ps[keep], width=0.4, label="released", color="#d62728")
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=60 if len(x) > 6 else 0, ha="right" if len(x) > 6 else "center",
                           fontsize=7)
        ax.set_ylabel("share of records")
        ax.set_title(c.name, fontsize=10)
        ax.legend(fontsize=8)
        out.append((c.name, _png(fig)))
    return out


def _heatmap(ax, M, labels, title, vmin, vmax, cmap):
    im = ax.imshow(M, vmin=vmin, vmax=vmax, cmap=cmap)
    ax.set_title(title, fontsize=10)
    if len(labels) <= 40:
        ax.set_xticks(range(len(labels)))
        ax.set_yticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=90, fontsize=6)
        ax.set_yticklabels(labels, fontsize=6)
    else:
        ax.set_xticks([])
        ax.set_yticks([])
    return im


def correlation_figure(real: pd.DataFrame, released: pd.DataFrame, schema: Schema) -> str:
    """Real, released and difference correlation heatmaps of the encoded tables (one figure)."""
    Xr, owner = _design(real, schema)
    Xs, _ = _design(released, schema)
    with _one_thread():
        Cr, Cs = _corr(Xr), _corr(Xs)
    labels = []
    for c in schema.columns:
        labels += [c.name] if c.kind == "numeric" else [f"{c.name}={shorten(v, 14).strip(chr(39))}" for v in c.categories]
    fig = _figure(15, 5.2)
    axes = fig.subplots(1, 3)
    _heatmap(axes[0], Cr, labels, "real", -1, 1, "RdBu_r")
    im = _heatmap(axes[1], Cs, labels, "released", -1, 1, "RdBu_r")
    fig.colorbar(im, ax=axes[:2], shrink=0.7)
    im = _heatmap(axes[2], np.abs(Cr - Cs), labels, "|real - released|", 0, 1, "Reds")
    fig.colorbar(im, ax=axes[2], shrink=0.7)
    return _png(fig)


def tvd2_figure(ev: Evaluation, schema: Schema) -> str | None:
    """The 2-way TVD of every pair of columns as a symmetric heatmap (None with fewer than 2 columns)."""
    names = schema.names
    if len(names) < 2:
        return None
    M = np.full((len(names), len(names)), np.nan)
    idx = {n: i for i, n in enumerate(names)}
    for (a, b), v in ev.tvd_2way.items():
        M[idx[a], idx[b]] = M[idx[b], idx[a]] = v
    fig = _figure(6.5, 5.5)
    ax = fig.add_subplot()
    im = _heatmap(ax, M, names, f"2-way TVD ({ev.bins_2way} bins per numeric column)", 0, 1, "viridis")
    fig.colorbar(im, ax=ax, shrink=0.8)
    return _png(fig)


def _table(rows, header=None) -> str:
    def cell(v, tag="td"):
        if isinstance(v, float):
            return f'<{tag} class="num">{v:.4g}</{tag}>'
        return f"<{tag}>{html.escape(str(v))}</{tag}>"

    head = "<tr>" + "".join(cell(h, "th") for h in header) + "</tr>" if header else ""
    return "<table>" + head + "".join("<tr>" + "".join(cell(v) for v in r) + "</tr>" for r in rows) + "</table>"


def _utility_rows(ev: Evaluation) -> list:
    worst = max(ev.tvd_1way, key=ev.tvd_1way.get)
    rows = [("1-way TVD, mean over columns", ev.tvd_1way_mean),
            (f"1-way TVD, worst column ({worst})", ev.tvd_1way[worst]),
            ("2-way TVD, mean over pairs", ev.tvd_2way_mean),
            ("correlation difference (mean |r_real - r_released|)", ev.correlation_difference)]
    for k, v in (ev.sdmetrics or {}).items():
        rows.append((f"SDMetrics quality: {k.replace('_', ' ')}", v))
    for who, res in (("release", ev.tstr), ("real data", ev.tstr_real)):
        for model, scores in (res or {}).items():
            for k, v in scores.items():
                rows.append((f"train on {who}, test on real: {model.replace('_', ' ')} {k}", v))
    return rows


def _certificate_section(cert: dict) -> str:
    keys = ("mechanism", "guarantee", "neighbouring_relation", "epsilon", "delta", "delta_source",
            "n_input_records", "n_output_records", "randomness", "package_version", "created_utc", "output_sha256")
    rows = [(k, cert[k] if not isinstance(cert.get(k), float) else float(cert[k])) for k in keys if k in cert]
    parts = ["<h2>Privacy certificate</h2>", _table(rows)]
    if cert.get("budget_split"):
        parts += ["<h3>Budget split</h3>", _table(sorted(cert["budget_split"].items()))]
    if cert.get("schema_provenance"):
        parts += ["<h3>Schema provenance</h3>",
                  f"<pre>{html.escape(json.dumps(cert['schema_provenance'], indent=2, default=str))}</pre>"]
    if cert.get("notes"):
        parts += ["<h3>Notes</h3><ul>" + "".join(f"<li>{html.escape(str(n))}</li>" for n in cert["notes"]) + "</ul>"]
    return "\n".join(parts)


def _ledger_section(summaries: list[dict]) -> str:
    rows = [(s["dataset_id"], float(s["epsilon_total"]), float(s["epsilon_spent"]), float(s["epsilon_remaining"]),
             float(s.get("delta_total") or 0.0), float(s.get("delta_spent") or 0.0), s["n_committed"], s["n_pending"])
            for s in summaries]
    header = ("dataset", "epsilon total", "epsilon spent", "epsilon remaining", "delta total", "delta spent",
              "committed", "pending")
    return "<h2>Ledger</h2>" + (_table(rows, header) if rows else "<p>The ledger holds no dataset.</p>")


def build_report(real: pd.DataFrame, released: pd.DataFrame, schema: Schema, *, test: pd.DataFrame | None = None,
                 label: str | None = None, certificate: dict | None = None, ledger: list[dict] | None = None,
                 sdmetrics: bool = False, title: str = "privrelease quality report") -> str:
    """The report as one self-contained HTML string (reads the private ``real`` table: not for publication)."""
    ev = evaluate(real, released, schema, test=test, label=label, sdmetrics=sdmetrics)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f'<div class="banner" role="alert">{html.escape(BANNER)}</div>',
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Real table: {ev.n_real:,} records; released table: {ev.n_released:,} records"
        + (f"; held-out test table: {ev.n_test:,} records (label <code>{html.escape(str(ev.label))}</code>)"
           if ev.n_test is not None else "") + f". <em>{html.escape(PRIVATE_NOTICE)}</em>.</p>",
        "<h2>Utility</h2>", _table(_utility_rows(ev), ("measure", "value")),
    ]
    if certificate is not None:
        parts.append(_certificate_section(certificate))
    if ledger is not None:
        parts.append(_ledger_section(ledger))
    parts += ["<h2>Each column: real and released distributions</h2>",
              "<p>Shares of records per cell: numeric columns in equal-width bins over the schema's public "
              "bounds, categorical columns at their declared levels (the cells of the 1-way TVD).</p>",
              '<div class="figs">']
    for name, img in column_figures(real, released, schema, ev.bins_1way):
        parts.append(f"<figure>{img}<figcaption>{html.escape(name)}: 1-way TVD "
                     f"{ev.tvd_1way[name]:.3f}</figcaption></figure>")
    parts += ["</div>", "<h2>Correlations of the encoded tables</h2>",
              "<figure>" + correlation_figure(real, released, schema) + "</figure>"]
    tvd2 = tvd2_figure(ev, schema)
    if tvd2 is not None:
        parts += ["<h2>2-way TVD of every pair of columns</h2>", f"<figure>{tvd2}</figure>"]
    parts.append("</body></html>")
    return "\n".join(parts)
