"""``privrelease ledger show|declare|cancel``: inspect and manage a privacy-budget ledger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from .common import open_ledger


def ledger_show(
    ledger: Path = typer.Argument(..., help="The ledger file."),
    dataset_id: Optional[str] = typer.Option(None, "--dataset-id", help="Show one dataset and its entries."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
):
    """Print each dataset's total, spent (committed + pending) and remaining budget."""
    led = open_ledger(ledger)
    ids = [dataset_id] if dataset_id is not None else led.datasets()
    summaries = [led.summary(i) for i in ids]
    if dataset_id is not None:
        summaries[0]["entries"] = led.history(dataset_id)
    if as_json:
        typer.echo(json.dumps(summaries, indent=2, default=str))
        return
    if not summaries:
        typer.echo(f"{ledger}: no datasets")
    for s in summaries:
        d = lambda k: f", delta {s[k]:.3g}" if s["delta_total"] else ""  # noqa: E731
        typer.echo(f"{s['dataset_id']}: total epsilon {s['epsilon_total']:.6g}{d('delta_total')}; "
                   f"spent {s['epsilon_spent']:.6g}{d('delta_spent')} "
                   f"({s['n_committed']} committed, {s['n_pending']} pending, {s['n_cancelled']} cancelled); "
                   f"remaining {s['epsilon_remaining']:.6g}{d('delta_remaining')}")
        for e in s.get("entries", []):
            delta = f" delta={e['delta']:.3g}" if e["delta"] else ""
            note = f"  [{e['note']}]" if e.get("note") else ""
            typer.echo(f"  #{e['id']:<4} {e['created_utc']}  {e['status']:<9} epsilon={e['epsilon']:.6g}{delta}  "
                       f"{e['mechanism'] or '-'} {json.dumps(e['details'], sort_keys=True)}{note}")


def ledger_declare(
    ledger: Path = typer.Argument(..., help="The ledger file (created if absent)."),
    dataset_id: str = typer.Option(..., "--dataset-id", help="Dataset identifier."),
    epsilon: float = typer.Option(..., "--epsilon", help="Total epsilon of the dataset."),
    delta: float = typer.Option(0.0, "--delta", help="Total delta of the dataset (for (epsilon, delta)-DP releases)."),
):
    """Declare a dataset's total budget before its first release (needed for a total delta > 0)."""
    from ..dp.costs import PrivacyCost

    total = open_ledger(ledger, must_exist=False).declare(dataset_id, PrivacyCost(epsilon, delta))
    typer.echo(f"{dataset_id}: total epsilon {total.epsilon:.6g}, delta {total.delta:.3g}")


def ledger_cancel(
    ledger: Path = typer.Argument(..., help="The ledger file."),
    entry_id: int = typer.Argument(..., help="Id of a PENDING entry (see `ledger show --dataset-id`)."),
    reason: str = typer.Option(..., "--reason", help="What you checked (e.g. 'no output file was written')."),
):
    """Cancel a pending entry left by a crash, after checking that its output does not exist."""
    open_ledger(ledger).cancel_pending(entry_id, reason)
    typer.echo(f"entry {entry_id} cancelled")
