"""``privrelease release`` (a table under a mechanism, with its certificate) and ``privrelease mechanisms``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import List, Optional

import typer

from .common import STATE, err, interrupt_notes, parse_params


def release(
    input: Optional[str] = typer.Argument(
        None, help="Input table (.csv, .csv.gz or .parquet), a directory of them or a quoted glob ('parts/*.parquet')."),
    schema: Optional[Path] = typer.Option(None, "--schema", "-s", help="Schema YAML/JSON (public bounds and levels)."),
    example: Optional[str] = typer.Option(None, "--example", help="Use a bundled example instead of INPUT/--schema: adult."),
    mechanism: Optional[str] = typer.Option(None, "--mechanism", "-m", help="Mechanism name (see `privrelease mechanisms`)."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", "-e", help="Privacy budget epsilon > 0."),
    delta: Optional[float] = typer.Option(None, "--delta", help="delta for (epsilon, delta)-DP mechanisms; < 1/n, default min(1e-5, 1/(10 n))."),
    out: Path = typer.Option(..., "--out", "-o", help="Output table (.csv, .csv.gz or .parquet); written atomically."),
    certificate: Optional[Path] = typer.Option(
        None, "--certificate", "-c",
        help="Write the publishable certificate JSON here, and the PRIVATE diagnostics (exact clip counts, input "
             "hash, the warnings that depend on single records) beside it as NAME.private-diagnostics.json."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace existing output files."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded noise for experiments (NOT for real releases)."),
    param: List[str] = typer.Option([], "--param", "-p", help="Mechanism parameter key=value (repeatable)."),
    on_out_of_bounds: str = typer.Option("clip", "--on-out-of-bounds", help="clip (counted in the private diagnostics) or error."),
    n_synthetic: Optional[int] = typer.Option(None, "--n-synthetic", help="Synthetic records to draw (synthetic mechanisms)."),
    ledger: Optional[Path] = typer.Option(None, "--ledger", help="SQLite budget ledger file."),
    dataset_id: Optional[str] = typer.Option(None, "--dataset-id", help="Dataset identifier in the ledger."),
    budget: Optional[str] = typer.Option(
        None, "--budget", help="Total budget of the dataset in the ledger, declared at its first release: EPSILON or "
                               "EPSILON,DELTA (default total delta min(1e-4, 1/n))."),
    chunk_rows: int = typer.Option(200_000, "--chunk-rows", help="Rows per streamed chunk."),
    engine: str = typer.Option("local", "--engine", help="local (streamed chunks) or dask (the passes run on Dask "
                                                          "partitions; only the statistics travel)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="With --engine dask: address of an existing "
                                                                       "dask.distributed scheduler (tcp://HOST:PORT)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="With --engine dask: start a local cluster of N "
                                                                   "worker processes for this release."),
    accept_distributional_privacy: bool = typer.Option(
        False, "--accept-distributional-privacy",
        help="Acknowledge that the mechanism gives distributional privacy, not differential privacy."),

    sep: Optional[str] = typer.Option(None, "--sep", help="CSV delimiter (default: found from the header line "
                                      "among , ; tab |; 'tab' or '\\t' for a tab)."),
    encoding: Optional[str] = typer.Option(None, "--encoding", help="CSV text encoding (default UTF-8), e.g. latin-1."),
):
    """Release INPUT under SCHEMA with a mechanism; write the table and its certificate."""
    from ..release import DEFAULT_MECHANISM
    from ..release.construct import epsilon_warning
    from ..release.options import ReleaseOptions
    from ..schema import Schema

    input, schema = _release_inputs(example, input, schema)
    for flag, path in (("--out", out), ("--certificate", certificate)):
        if path is not None and not path.parent.exists():  # (Python callers get the folder made for them)
            err(f"the folder of {flag} {path} does not exist; create it first (nothing was read or charged)")
    name = mechanism or DEFAULT_MECHANISM
    cls = _checked_mechanism(name, epsilon, accept_distributional_privacy)
    sch = Schema.from_yaml(schema)
    if epsilon_warning(epsilon):
        typer.echo(f"warning: {epsilon_warning(epsilon)}", err=True)
    typer.echo(f"releasing {input} with {name} (epsilon={_compact(epsilon)})", err=True)
    options = ReleaseOptions(delta=delta, rng=seed, on_out_of_bounds=on_out_of_bounds, n_synthetic=n_synthetic,
                             certificate_path=certificate, ledger=ledger, dataset_id=dataset_id, budget=budget,
                             chunk_rows=chunk_rows, engine=engine, scheduler=scheduler, workers=workers,
                             overwrite=overwrite, sep=sep, encoding=encoding)
    cert = _release_with_bar(input, sch, out, name, epsilon, param, options)
    _say_written(cert, out, certificate, sch, cls)


def _release_inputs(example, input, schema):
    """INPUT and SCHEMA: the given ones, or the bundled ones of ``--example`` (not both)."""
    from ..datasets import example_paths

    if example is not None:
        if input is not None or schema is not None:
            err("give either --example or INPUT with --schema, not both")
        input, schema = example_paths(example)
    if input is None or schema is None:
        err("give INPUT and --schema SCHEMA.yaml (or --example adult)")
    return input, schema


def _checked_mechanism(name: str, epsilon, accept_distributional_privacy: bool):
    """The mechanism's class, once its guarantee and the given epsilon agree (and distributional privacy is
    acknowledged)."""
    from ..mechanisms import get_mechanism

    cls = get_mechanism(name)
    if cls.guarantee == "distributional" and not accept_distributional_privacy:
        err(f"mechanism '{name}' gives distributional privacy, NOT differential privacy: it protects only "
            f"datasets inside a class defined by assumptions on the population. Pass "
            f"--accept-distributional-privacy to acknowledge this.")
    if cls.guarantee == "distributional":
        if epsilon is not None:
            err(f"mechanism '{name}' takes no --epsilon; its parameters are given with --param")
    elif epsilon is None:
        err("--epsilon is required (a number > 0)")
    return cls


def _release_with_bar(input, sch, out, name, epsilon, param: List[str], options):
    """:func:`~privrelease.release.pipeline.run_release` of the release's ``options`` (a
    :class:`~privrelease.release.options.ReleaseOptions`) with a progress bar on the terminal (the
    weak-epsilon warning was already said once). With a certificate, the warnings that depend on single
    records (clipped columns, a one-class label) go to the private diagnostics only, not to the console."""
    from ..errors import PrivateDataWarning, WeakPrivacyWarning
    from ..release import pipeline
    from .progress import ProgressBar

    params = mechanism_params(param, options.names())
    bar = STATE["bar"] = ProgressBar()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakPrivacyWarning)  # said above, once
        if options.certificate_path is not None:
            warnings.simplefilter("ignore", PrivateDataWarning)  # written to NAME.private-diagnostics.json
        try:
            with interrupt_notes():
                return pipeline.run_release(input, sch, out, name, epsilon, options=options, params=params,
                                            progress=bar)
        finally:
            bar.close()
            STATE["bar"] = None


def mechanism_params(param: List[str], options) -> dict:
    """``--param`` items as mechanism parameters; a name the release itself takes (``delta``, ``rng``,
    ``engine``, ...: the names in ``options``) is refused in one line with the option that sets it."""
    params = parse_params(param)
    taken = sorted(set(params) & (set(options) | {"input_path", "schema", "out_path", "mechanism", "epsilon",
                                                  "progress"}))
    if taken:
        k = taken[0]
        err(f"--param {k}=... is not a mechanism parameter: the release sets it"
            + (f" (use --{k.replace('_', '-')})" if k in options and k not in ("rng", "progress") else ""))
    return params


def _compact(x) -> str:
    """A privacy parameter in at most 6 significant digits (1e-06, not 1.0000000000000002e-06)."""
    return "none" if x is None else f"{x:.6g}"


def _say_written(cert, out, certificate, sch, cls) -> None:
    """What was written where (the certificate is publishable, the diagnostics are not), and the released
    columns when they are not the schema's."""
    from ..release import diagnostics_path

    typer.echo(
        f"wrote {out} ({cert.n_output_records:,} records, {cert.guarantee}, epsilon={_compact(cert.epsilon)}, "
        f"delta={_compact(cert.delta)}, noise: {cert.randomness})"
        + (f"; certificate {certificate} (publishable); PRIVATE diagnostics {diagnostics_path(certificate)} "
           f"(do not publish; holds the data warnings, if any)" if certificate else ""),
        err=True,
    )
    if set(cert.output_columns) != set(sch.names):
        cols = cert.output_columns
        shown = ", ".join(cols[:3]) + (f", ..., {cols[-1]}" if len(cols) > 4 else "".join(f", {c}" for c in cols[3:]))
        typer.echo(f"note: the released table's columns are {shown}: {cls.columns}", err=True)


def mechanisms(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")):
    """List every mechanism with its guarantee and neighbouring relation."""
    from ..mechanisms import list_mechanisms

    infos = [c.info() for c in list_mechanisms()]
    if as_json:
        typer.echo(json.dumps(infos, indent=2))
        return
    import textwrap

    options = {"epsilon": "--epsilon", "delta": "--delta", "rng": "--seed", "domain": None}  # set by the release
    pad = " " * 23
    for i in infos:
        typer.echo(f"{i['name']:<22} {i['guarantee']:<20} {i['output']:<12} {i['summary']}")
        typer.echo(f"{pad}neighbours: {i['neighbouring_relation']}")
        typer.echo(f"{pad}columns: {i['columns']}")
        if i.get("missing_numeric"):
            typer.echo(f"{pad}releases missing numeric values (columns with 'missing: allowed')")
        if i.get("calendar_parts"):
            typer.echo(f"{pad}releases a date-time column as its day and its time of day (two columns inside)")
        if i.get("explanation"):
            typer.echo(f"{pad}{i['explanation']}")
        for key, meaning in (i.get("parameters") or {}).items():
            flag = options.get(key, f"--param {key}=...")
            if flag is None:
                continue
            typer.echo(textwrap.fill(f"{flag}: {meaning}", width=110, initial_indent=pad,
                                     subsequent_indent=pad + "    ", break_on_hyphens=False))
