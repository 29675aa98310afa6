"""Quality of a release against the real table (reads private data: the output is NOT for publication):
``privrelease report`` (one HTML page) and ``privrelease evaluate`` (a table of numbers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from .common import err, example_inputs, open_ledger


def report(
    real: Optional[Path] = typer.Argument(None, help="The real (private) table that was released."),
    released: Optional[Path] = typer.Argument(None, help="The released table."),
    schema: Optional[Path] = typer.Option(None, "--schema", "-s", help="Schema YAML/JSON of both tables."),
    out: Path = typer.Option(..., "--out", "-o", help="The HTML report to write (one self-contained file)."),
    example: Optional[str] = typer.Option(
        None, "--example", help="Report on a release of a bundled example (adult): REAL, --schema and --test "
                                "are the bundled ones; give only RELEASED."),
    test: Optional[Path] = typer.Option(None, "--test", help="Real held-out records for train-on-release scores."),
    label: Optional[str] = typer.Option(None, "--label", help="Label column (default: the schema's label)."),
    certificate: Optional[Path] = typer.Option(None, "--certificate", "-c", help="The release's certificate JSON."),
    ledger: Optional[Path] = typer.Option(None, "--ledger", help="A ledger whose state the report shows."),
    dataset_id: Optional[str] = typer.Option(None, "--dataset-id", help="Show only this dataset of the ledger."),
    sdmetrics: bool = typer.Option(True, "--sdmetrics/--no-sdmetrics", help="Include SDMetrics' quality scores, "
                                   "as evaluate prints them (--no-sdmetrics: faster on wide tables)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file."),

    sep: Optional[str] = typer.Option(None, "--sep", help="CSV delimiter (default: found from the header line "
                                      "among , ; tab |; 'tab' or '\\t' for a tab)."),
    encoding: Optional[str] = typer.Option(None, "--encoding", help="CSV text encoding (default UTF-8), e.g. latin-1."),
):
    """Write ONE self-contained HTML quality report (measures, vector figures, certificate, ledger). It shows private
    statistics of REAL: NOT for publication."""
    from ..evaluation.fidelity import PRIVATE_NOTICE
    from ..evaluation.report import build_report
    from ..io import atomic_write

    real, released, schema, test = example_inputs(example, real, released, schema, test)
    if out.suffix.lower() not in (".html", ".htm"):
        err(f"--out {out} must be an .html file")
    if out.is_dir():
        err(f"--out {out} is a directory")
    if not out.parent.is_dir():
        err(f"the folder of --out {out} does not exist; create it first")
    if out.exists() and not overwrite:
        err(f"{out} exists; pass --overwrite to replace it")
    if out.resolve() in {p.resolve() for p in (real, released, test, certificate, ledger) if p is not None}:
        err(f"--out {out} is one of the inputs")
    cert = None
    if certificate is not None:
        try:
            cert = json.loads(certificate.read_text())
        except (OSError, ValueError) as exc:
            err(f"cannot read the certificate {certificate}: {str(exc).splitlines()[0]}")
    state = None
    if ledger is not None:
        led = open_ledger(ledger)
        state = [led.summary(i) for i in ([dataset_id] if dataset_id is not None else led.datasets())]
    typer.echo(f"note: {PRIVATE_NOTICE}", err=True)
    sch, frames = _read_tables(schema, dict(sep=sep, encoding=encoding), real=real, released=released, test=test)
    _without_label(sch, frames, label)
    page = build_report(frames["real"], frames["released"], sch, test=frames.get("test"), label=label,
                        certificate=cert, ledger=state, sdmetrics=sdmetrics)
    with atomic_write(out, "w") as fh:
        fh.write(page)
    typer.echo(f"wrote {out} ({len(page) / 1e6:.1f} MB; shows private statistics: NOT for publication)", err=True)


def evaluate_cmd(
    real: Optional[Path] = typer.Argument(None, help="The real (private) table that was released."),
    released: Optional[Path] = typer.Argument(None, help="The released table."),
    schema: Optional[Path] = typer.Option(None, "--schema", "-s", help="Schema YAML/JSON of both tables."),
    example: Optional[str] = typer.Option(
        None, "--example", help="Evaluate a release of a bundled example (adult): REAL, --schema and --test "
                                "are the bundled ones; give only RELEASED."),
    test: Optional[Path] = typer.Option(None, "--test", help="Real held-out records for train-on-release scores."),
    label: Optional[str] = typer.Option(None, "--label", help="Label column (default: the schema's label)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write every number as JSON here."),
    no_sdmetrics: bool = typer.Option(False, "--no-sdmetrics", help="Skip the SDMetrics quality report (slow on "
                                                                      "wide tables)."),

    sep: Optional[str] = typer.Option(None, "--sep", help="CSV delimiter (default: found from the header line "
                                      "among , ; tab |; 'tab' or '\\t' for a tab)."),
    encoding: Optional[str] = typer.Option(None, "--encoding", help="CSV text encoding (default UTF-8), e.g. latin-1."),
):
    """Measure how faithful RELEASED is to REAL. Reads the private data: the output is NOT for publication."""
    from ..evaluation.fidelity import evaluate  # its table's first line is the private-data notice (said once)
    from ..io import atomic_write

    real, released, schema, test = example_inputs(example, real, released, schema, test)
    if json_out is not None and json_out.is_dir():
        err(f"--json {json_out} is a directory")
    if json_out is not None and not json_out.parent.is_dir():
        err(f"the folder of --json {json_out} does not exist; create it first")
    sch, frames = _read_tables(schema, dict(sep=sep, encoding=encoding), real=real, released=released, test=test)
    _without_label(sch, frames, label)
    ev = evaluate(frames["real"], frames["released"], sch, test=frames.get("test"), label=label,
                  sdmetrics=not no_sdmetrics)
    typer.echo(ev.to_table())  # its first line is the private-data notice (once, with the numbers)
    if json_out is not None:
        with atomic_write(json_out, "w") as fh:
            fh.write(json.dumps(ev.to_dict(), indent=2))
        typer.echo(f"wrote {json_out} (private: not for publication)", err=True)


def _without_label(sch, frames: dict, label: str | None) -> None:
    """A table without a label has no classifier to score on ``--test``: say so and go on without it."""
    if "test" in frames and label is None and sch.label is None:
        del frames["test"]
        typer.echo("note: the schema names no label, so --test (held-out records to score a classifier trained on "
                   "the release) is not used; give --label COLUMN to score one", err=True)


def _read_tables(schema: Path, csv: dict, **paths):
    """The schema and the tables given (``real``, ``released``, ``test``; None ones are left out), read under it
    (``csv``: the --sep and --encoding of CSV files)."""
    from ..io import read_table
    from ..schema import Schema
    from ..schema.dates import dates_as_numbers

    sch = Schema.from_yaml(schema)
    return sch, {what: dates_as_numbers(read_table(path, sch, **csv), sch) for what, path in paths.items()
                  if path is not None}
