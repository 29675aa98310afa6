"""The figures of the quality report as inline SVG (vector, with real text), sized to stay readable.

Every figure is drawn on its own matplotlib ``Figure`` (Agg/SVG canvases, no pyplot state) and
returned as an ``<svg>`` element. Text is kept as SVG text (``svg.fonttype: none``) at 8 points
or more, and heatmap cells are vector rectangles of at least about 11 points a side, so a figure
of 50 columns keeps every label legible; the page scrolls sideways rather than shrink a figure.

* :func:`column_figure`: one column's real and released shares over the 1-way TVD's public cells
  as side-by-side bars (no translucent overlap), integer columns labelled with the whole numbers
  each bin holds, date columns with dates, other bins with their edges at the digits that tell
  adjacent bins apart; a categorical column of more than ``MAX_BARS`` levels shows its largest
  levels and one bar for the others (:func:`bar_cells`); numeric columns also get both
  distribution functions (the KS statistic is their largest vertical gap).
* :func:`heatmap_figure`: a square matrix over named rows/columns; ``nan`` cells (the diagonal,
  an undefined value) are left blank rather than given a colour.
* :func:`cramers_v`: the association of every pair of schema columns over the 2-way TVD's cells.
"""

from __future__ import annotations

import io
import math
import re

import numpy as np
import pandas as pd

from .cells import is_datetime, numeric_values, unit_seconds

REAL, RELEASED = "#1f5fa8", "#e08a1e"  # blue and orange: apart for the common colour-vision deficiencies
FONT = 8.5
MAX_BARS = 30  #: a categorical chart draws at most this many levels, the others as one bar


def svg(fig) -> str:
    """A matplotlib Figure as an inline ``<svg>`` element (text as text, no XML prologue)."""
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    FigureCanvasSVG(fig)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "privrelease"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.08)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _figure(w: float, h: float):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h))
    fig.set_facecolor("white")
    return fig


def clip(text: str, n: int = 32) -> str:
    """``text`` cut to ``n`` characters with an ellipsis (labels of long level names)."""
    text = re.sub(r"\s+", " ", str(text))
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _date(col, v: float) -> str:
    sec = unit_seconds(col)
    t = pd.Timestamp(v * sec, unit="s")
    return t.strftime("%Y-%m-%d" if sec >= 86400 else "%Y-%m-%d %H:%M")


def cell_labels(col, bins: int) -> list[str]:
    """Labels of a column's public cells: "missing / other" first, then bins (whole numbers held for an
    integer column, dates for a date column, the bin's range otherwise) or declared levels."""
    if col.kind != "numeric":
        return ["missing / other"] + [clip(v, 24) for v in col.categories]
    edges = np.linspace(col.lower, col.upper, bins + 1)
    out = ["missing"]
    for b in range(bins):
        lo, hi = edges[b], edges[b + 1]
        if is_datetime(col):
            out.append(_date(col, lo))
        elif getattr(col, "resolution", None) == 1.0:
            a, z = math.ceil(lo), (math.floor(hi) if b == bins - 1 else math.ceil(hi) - 1)
            out.append("" if a > z else f"{a:,}" if a == z else f"{a:,}\u2013{z:,}")
        else:
            out.append(None)
    if None in out:  # plain bins: enough digits that adjacent edges differ
        text = edge_texts(edges)
        out = [t if t is not None else f"{text[b - 1]}\u2013{text[b]}" for b, t in enumerate(out)]
    return out


def edge_texts(edges: np.ndarray, digits: int = 3) -> list[str]:
    """The bin edges at the fewest significant digits (at least ``digits``) that write no two of them alike.

    >>> edge_texts(np.array([44.9, 44.925, 44.95])), edge_texts(np.array([0.0, 0.5, 1.0]))
    (['44.9', '44.92', '44.95'], ['0', '0.5', '1'])
    """
    for d in range(digits, 18):
        text = [f"{e:.{d}g}" for e in edges]
        if len(set(text)) == len(text):
            return text
    return [repr(float(e)) for e in edges]


def bar_cells(col, pr: np.ndarray, ps: np.ndarray, labels: list[str]):
    """The cells a column's bar chart draws: all of them, or for a categorical column of more than MAX_BARS
    levels the missing / other cell, the MAX_BARS - 1 levels of the largest share (real or released) in their
    declared order, and one bar "other levels (k)" holding the shares of the k others."""
    levels = len(pr) - 1
    if col.kind == "numeric" or levels <= MAX_BARS:
        return pr, ps, labels
    top = np.sort(np.argsort(-np.maximum(pr[1:], ps[1:]), kind="stable")[:MAX_BARS - 1]) + 1
    rest = np.setdiff1d(np.arange(1, levels + 1), top)
    keep = np.r_[0, top]
    return (np.r_[pr[keep], pr[rest].sum()], np.r_[ps[keep], ps[rest].sum()],
            [labels[i] for i in keep] + [f"other levels ({len(rest)})"])


def column_figure(col, pr: np.ndarray, ps: np.ndarray, labels: list[str], real: pd.Series | None = None,
                  released: pd.Series | None = None) -> str:
    """One column: side-by-side bars of the real and released shares per cell (:func:`bar_cells`; and, for a
    numeric column given its values, both distribution functions)."""
    pr, ps, labels = bar_cells(col, pr, ps, labels)
    keep = np.ones(len(pr), dtype=bool)
    keep[0] = pr[0] > 0 or ps[0] > 0  # the missing / other cell only when something falls in it
    x = np.arange(keep.sum())
    wide = max(4.2, min(11.0, 0.24 * len(x) + 1.6))
    ecdf = col.kind == "numeric" and real is not None
    fig = _figure(wide + (3.6 if ecdf else 0), 3.0)
    grid = fig.add_gridspec(1, 2, width_ratios=[wide, 3.0]) if ecdf else fig.add_gridspec(1, 1)
    ax = fig.add_subplot(grid[0, 0])
    ax.bar(x - 0.2, pr[keep], width=0.4, label="real", color=REAL)
    ax.bar(x + 0.2, ps[keep], width=0.4, label="released", color=RELEASED)
    ax.set_xticks(x)
    rotate = len(x) > 5 or max((len(t) for t in np.asarray(labels)[keep]), default=0) > 8
    ax.set_xticklabels(np.asarray(labels)[keep], rotation=55 if rotate else 0, ha="right" if rotate else "center",
                       rotation_mode="anchor", fontsize=FONT)
    ax.tick_params(axis="y", labelsize=FONT)
    ax.set_ylabel("share of records", fontsize=FONT)
    ax.set_xlim(-0.6, len(x) - 0.4)
    ax.set_title(clip(col.name, 60), fontsize=10, loc="left", pad=17)
    ax.legend(fontsize=FONT, frameon=False, ncol=2, loc="lower left", bbox_to_anchor=(0.0, 1.0),
              borderaxespad=0.1, borderpad=0.1)  # between the title and the bars, never over either
    if ecdf:
        _ecdf_axes(fig.add_subplot(grid[0, 1]), col, real, released)
    return svg(fig)


def _ecdf_axes(ax, col, real, released) -> None:
    for values, name, colour, style in ((real, "real", REAL, "-"), (released, "released", RELEASED, "--")):
        v = numeric_values(values, col)
        v = np.sort(v[~np.isnan(v)])
        if len(v):
            x = np.unique(v)
            if len(x) > 1000:  # at most about 1000 steps drawn: the distribution function at its quantiles
                x = np.unique(np.quantile(v, np.linspace(0, 1, 1001)))
            f = np.searchsorted(v, x, side="right") / len(v)
            ax.step(np.r_[x[0], x], np.r_[0.0, f], where="post", color=colour, linestyle=style, linewidth=1.4,
                    label=name)
    ax.set_xlim(col.lower, col.upper)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("share of records at or below", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    if is_datetime(col):
        ticks = np.linspace(col.lower, col.upper, 3)
        ax.set_xticks(ticks)
        ax.set_xticklabels([_date(col, t) for t in ticks], fontsize=FONT)
    ax.legend(fontsize=FONT, frameon=False, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2,
              borderaxespad=0.2)


def heatmap_figure(M: np.ndarray, labels: list[str], title: str, vmin: float, vmax: float, cmap: str,
                   colorbar: str) -> str:
    """A labelled square heatmap as SVG; ``nan`` cells are left blank (light grey)."""
    k = len(labels)
    cell = 0.17  # inches: about 12 points a side
    side = max(2.5, cell * k)
    fig = _figure(side + 1.4, side + 0.3)
    ax = fig.add_axes((0.0, 0.0, side / (side + 1.4), side / (side + 0.3)))
    ax.set_facecolor("#eeeeee")
    mesh = ax.pcolormesh(np.ma.masked_invalid(M), vmin=vmin, vmax=vmax, cmap=cmap, edgecolors="white",
                         linewidth=0.3)
    ax.set_xlim(0, k)
    ax.set_ylim(k, 0)
    ax.set_xticks(np.arange(k) + 0.5)
    ax.set_yticks(np.arange(k) + 0.5)
    ax.set_xticklabels(labels, rotation=90, fontsize=FONT)
    ax.set_yticklabels(labels, fontsize=FONT)
    ax.tick_params(length=0)
    ax.set_title(title, fontsize=10, loc="left")
    cax = fig.add_axes((side / (side + 1.4) + 0.03, 0.25, 0.025, 0.5))
    cb = fig.colorbar(mesh, cax=cax)
    cb.ax.tick_params(labelsize=FONT)
    cb.set_label(colorbar, fontsize=FONT)
    return svg(fig)


def cramers_v(codes: np.ndarray, cards: list[int]) -> np.ndarray:
    """Cramér's V of every pair of columns of a matrix of cell codes (``nan`` on the diagonal and where a
    column holds one cell only).

    >>> v = cramers_v(np.array([[0, 0, 1], [1, 1, 1], [0, 0, 0], [1, 1, 0]]), [2, 2, 2])
    >>> v.round(3).tolist()
    [[nan, 1.0, 0.0], [1.0, nan, 0.0], [0.0, 0.0, nan]]
    """
    k = codes.shape[1]
    out = np.full((k, k), np.nan)
    n = len(codes)
    for i in range(k):
        for j in range(i + 1, k):
            t = np.bincount(codes[:, i] * cards[j] + codes[:, j], minlength=cards[i] * cards[j]).reshape(cards[i], -1)
            t = t[t.sum(axis=1) > 0][:, t.sum(axis=0) > 0]
            m = min(t.shape) - 1
            if m < 1:
                continue
            expected = np.outer(t.sum(axis=1), t.sum(axis=0)) / n
            chi2 = float(((t - expected) ** 2 / expected).sum())
            out[i, j] = out[j, i] = math.sqrt(min(chi2 / (n * m), 1.0))
    return out
