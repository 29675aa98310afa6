"""The papers' side of the command line: ``privrelease reproduce`` (a paper's figure or table on real data)
and ``privrelease distributional-privacy`` (Theorem IV.6's alpha bound)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from .common import err


def reproduce(
    name: Optional[str] = typer.Argument(None, help="Reproduction name (see --list)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory for NAME.json and NAME.png "
                                       "(default results/, or results/quick/ with --quick)."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder with the real data sets (default ../shared/datasets)."),
    quick: bool = typer.Option(False, "--quick", help="A small real slice (as run in CI); never replaces a full "
                               "result unless --overwrite."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Let a --quick run replace a full result in --out."),
    seed: int = typer.Option(0, "--seed", help="Seed of the experiment (reproductions use seeded noise)."),
    list_: bool = typer.Option(False, "--list", help="List the available reproductions."),
    data: Optional[Path] = typer.Option(None, "--data", help="zhuang-table: the table to evaluate."),
    schema: Optional[Path] = typer.Option(None, "--schema", help="zhuang-table: its schema."),
    utility_label: Optional[str] = typer.Option(None, "--utility-label", help="zhuang-table: utility label column."),
    privacy_label: Optional[str] = typer.Option(None, "--privacy-label", help="zhuang-table: privacy label column."),
    k: Optional[int] = typer.Option(None, "--k", help="zhuang-table: projection dimension K."),
    per_combination: Optional[int] = typer.Option(None, "--per-combination", help="zhuang-table: records per cell."),
    protocol: Optional[str] = typer.Option(None, "--protocol", help="zhuang-*: 'fast' (default: 5 repetitions, 5-fold CV, small grid) or 'paper' (15, 10-fold, 7x7 grid)."),
    repetitions: Optional[int] = typer.Option(None, "--repetitions", help="zhuang-*: override the number of repetitions."),
    max_iter: Optional[int] = typer.Option(None, "--max-iter", help="zhuang-*: override the MMD iteration cap T_max."),
    update: Optional[str] = typer.Option(None, "--update", help="zhuang-*: reading of the MMD update rule, 'literal' (default) or 'gradient'."),
):
    """Regenerate a paper's figure or table on real data, our numbers beside the paper's."""
    import os

    from ..experiments import get_reproduction, list_reproductions
    from ..experiments.registry import full_result

    if list_ or name is None:
        for r in list_reproductions():
            typer.echo(f"{r.name:<22} {r.paper:<28} {r.description}")
        return
    if data_dir is not None:
        os.environ["PRIVRELEASE_DATA"] = str(data_dir)
    rep = get_reproduction(name)
    if out is None:
        out = Path("results") / "quick" if quick else Path("results")
    if quick and not overwrite and full_result(out, name) is not None:
        err(f"{full_result(out, name)} holds a full result that a --quick slice would replace; "
             f"write the slice elsewhere (--out, default results/quick) or pass --overwrite")
    typer.echo(f"reproducing {name}{' (quick slice)' if quick else ''} -> {out}", err=True)
    extra = {key: v for key, v in (("data", data), ("schema", schema), ("utility_label", utility_label),
                                   ("privacy_label", privacy_label), ("k", k), ("per_combination", per_combination),
                                   ("protocol", protocol), ("repetitions", repetitions), ("max_iter", max_iter),
                                   ("update", update))
             if v is not None}
    res = rep.run(out, data_dir=data_dir, quick=quick, seed=seed, progress=lambda m: typer.echo(f"  {m}", err=True),
                  **extra)
    typer.echo(f"wrote {out / (name + '.json')} and {out / (name + '.png')}", err=True)
    summary = res.get("verdict") or res.get("summary")
    if summary:
        typer.echo(summary)


def distributional_privacy(
    n: int = typer.Option(..., "--n", help="Number of records."),
    p: int = typer.Option(..., "--p", help="Number of (encoded) columns."),
    m: int = typer.Option(..., "--m", help="Released rows of the compression."),
    delta_max: Optional[float] = typer.Option(None, "--delta-max", help="Delta_max of the protected class (default sqrt(ln p / n))."),
    delta_fro: Optional[float] = typer.Option(None, "--delta-fro", help="||Sigma_1 - Sigma_i||_F (default p * Delta_max, the worst case)."),
    lambda_min: float = typer.Option(1.0, "--lambda-min", help="Smallest eigenvalue of the private normalised covariance."),
    lambda_min_ref: float = typer.Option(1.0, "--lambda-min-ref", help="Smallest eigenvalue of the reference covariance."),
    ref_norm: float = typer.Option(1.0, "--ref-norm", help="Largest eigenvalue of the reference covariance."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
):
    """Theorem IV.6's alpha bound for the compression mechanism (distributional privacy, NOT DP)."""
    from ..evaluation.distributional import theorem_iv6_alpha

    r = theorem_iv6_alpha(n, p, m, delta_max=delta_max, delta_fro=delta_fro, lambda_min=lambda_min,
                          lambda_min_ref=lambda_min_ref, ref_norm=ref_norm)
    if as_json:
        typer.echo(json.dumps(r, indent=2))
        return
    c = r["conditions"]
    typer.echo(f"alpha <= {r['alpha_bound']:.4g}  (Theorem IV.6, o(1) dropped; tau = {r['tau']:.4g}, Psi = {r['psi']:.4g})")
    for a in r["assumed"]:
        typer.echo(f"  assumed: {a}")
    typer.echo(f"  Lemma IV.4 needs m >= {c['lemma_IV4_min_m']}: {'yes' if c['lemma_IV4_holds'] else 'NO'}")
    typer.echo(f"  PCA utility needs m of order p^2 ln(2np) = {c['pca_utility_m_order_p2_ln2np']:.4g}")
    typer.echo(f"  Theorem III.2 wants Delta_max << 1/(p^2 sqrt(m ln 2np)) = "
               f"{c['thm_III2_delta_max_scale_1_over_p2_sqrt_m_ln2np']:.3g} (ratio {c['thm_III2_ratio_delta_max_to_scale']:.3g})")
    typer.echo(f"  Theorem III.5 wants p^2 log n / sqrt(n/m) small: {c['thm_III5_ratio_p2_log_n_over_sqrt_n_over_m']:.3g}")
    typer.echo("  This is distributional privacy on an assumed class of datasets, NOT differential privacy; "
               "alpha is asymptotic. Audit a concrete pair with privrelease.evaluation.distributional.audit_pair.")
