"""Command-line interface (thin: every command calls the library)."""

from __future__ import annotations

import json
import sys
import traceback
import warnings
from pathlib import Path
from typing import List, Optional

import typer


from .._version import __version__
from ..errors import PrivReleaseError, PrivReleaseWarning

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="privrelease: release a sensitive table with a stated privacy guarantee.\n\n"
    "Start with: privrelease release --example adult --epsilon 1 --out released.csv --certificate cert.json",
)
schema_app = typer.Typer(no_args_is_help=True, help="Draft and check schemas (the public description of a table).")
app.add_typer(schema_app, name="schema")

_STATE = {"debug": False, "bar": None}


def _err(msg: str, code: int = 2):
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def _parse_params(items: List[str]) -> dict:
    import yaml

    params = {}
    for item in items or []:
        if "=" not in item:
            _err(f"--param expects key=value, got '{item}'")
        k, v = item.split("=", 1)
        try:
            params[k.strip().replace("-", "_")] = yaml.safe_load(v)
        except yaml.YAMLError:
            params[k.strip().replace("-", "_")] = v
    return params


def _print_version(value: bool):
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _main(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                 callback=_print_version),
):
    _STATE["debug"] = debug


@app.command()
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
             "hash) beside it as NAME.private-diagnostics.json."),
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
):
    """Release INPUT under SCHEMA with a mechanism; write the table and its certificate."""
    from ..datasets import example_paths
    from ..errors import WeakPrivacyWarning
    from ..mechanisms import get_mechanism
    from ..release import DEFAULT_MECHANISM, diagnostics_path, release_file
    from ..release.construct import epsilon_warning
    from ..schema import Schema

    if example is not None:
        if input is not None or schema is not None:
            _err("give either --example or INPUT with --schema, not both")
        input, schema = example_paths(example)
    if input is None or schema is None:
        _err("give INPUT and --schema SCHEMA.yaml (or --example adult)")
    name = mechanism or DEFAULT_MECHANISM
    cls = get_mechanism(name)
    if cls.guarantee == "distributional" and not accept_distributional_privacy:
        _err(f"mechanism '{name}' gives distributional privacy, NOT differential privacy: it protects only "
             f"datasets inside a class defined by assumptions on the population. Pass "
             f"--accept-distributional-privacy to acknowledge this.")
    if cls.guarantee == "distributional":
        if epsilon is not None:
            _err(f"mechanism '{name}' takes no --epsilon; its parameters are given with --param")
    elif epsilon is None:
        _err("--epsilon is required (a number > 0)")
    sch = Schema.from_yaml(schema)
    if epsilon_warning(epsilon):
        typer.echo(f"warning: {epsilon_warning(epsilon)}", err=True)
    typer.echo(f"releasing {input} with {name} (epsilon={epsilon})", err=True)
    from .progress import ProgressBar

    bar = _STATE["bar"] = ProgressBar()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakPrivacyWarning)  # said above, once
        try:
            cert = release_file(
                input, sch, out, name, epsilon, delta=delta, rng=seed, on_out_of_bounds=on_out_of_bounds,
                n_synthetic=n_synthetic, certificate_path=certificate, ledger=ledger, dataset_id=dataset_id,
                budget=budget, chunk_rows=chunk_rows, progress=bar, engine=engine, scheduler=scheduler,
                workers=workers, overwrite=overwrite, **_parse_params(param),
            )
        finally:
            bar.close()
            _STATE["bar"] = None
    typer.echo(
        f"wrote {out} ({cert.n_output_records:,} records, {cert.guarantee}, epsilon={cert.epsilon}, "
        f"delta={cert.delta}, noise: {cert.randomness})"
        + (f"; certificate {certificate} (publishable); PRIVATE diagnostics {diagnostics_path(certificate)} "
           f"(do not publish)" if certificate else ""),
        err=True,
    )
    if set(cert.output_columns) != set(sch.names):
        cols = cert.output_columns
        shown = ", ".join(cols[:3]) + (f", ..., {cols[-1]}" if len(cols) > 4 else "".join(f", {c}" for c in cols[3:]))
        typer.echo(f"note: the released table's columns are {shown}: {cls.columns}", err=True)


@app.command()
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
        if i.get("explanation"):
            typer.echo(f"{pad}{i['explanation']}")
        for key, meaning in (i.get("parameters") or {}).items():
            flag = options.get(key, f"--param {key}=...")
            if flag is None:
                continue
            typer.echo(textwrap.fill(f"{flag}: {meaning}", width=110, initial_indent=pad,
                                     subsequent_indent=pad + "    ", break_on_hyphens=False))


@schema_app.command("draft")
def schema_draft(
    input: Path = typer.Argument(..., help="A table to draft a schema from."),
    label: Optional[str] = typer.Option(None, "--label", help="Column to mark as the label."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", "-e", help="Draft under differential privacy with "
                                            "this epsilon (DP quantile bounds, DP-selected levels). Without it "
                                            "the draft reads the data and is NOT private."),
    delta: Optional[float] = typer.Option(None, "--delta", help="DP draft: delta for the selection of "
                                          "categorical levels (default min(1e-5, 1/(10 n)))."),
    range_: List[str] = typer.Option([], "--range", help="DP draft: public range lo,hi of the candidate bounds "
                                     "(all numeric columns), or COLUMN=lo,hi (repeatable)."),
    quantiles: str = typer.Option("0.01,0.99", "--quantiles", help="DP draft: the quantiles that become the "
                                  "lower and upper bounds."),
    categorical: Optional[str] = typer.Option(None, "--categorical", help="DP draft: comma-separated numeric "
                                              "columns to treat as categorical."),
    ledger: Optional[Path] = typer.Option(None, "--ledger", help="DP draft: charge the draft to this ledger."),
    dataset_id: Optional[str] = typer.Option(None, "--dataset-id", help="DP draft: dataset identifier in the ledger."),
    budget: Optional[str] = typer.Option(None, "--budget", help="DP draft: total budget EPS[,DELTA] declared "
                                         "for the dataset at its first use of the ledger."),
    seed: Optional[int] = typer.Option(None, "--seed", help="DP draft: seeded noise (NOT for real use)."),
):
    """Print a YAML schema draft for review: private with --epsilon, otherwise read from the data (NOT private)."""
    from ..errors import NotPrivateWarning
    from ..io import read_table
    from ..schema import draft_schema

    df = read_table(input)
    if epsilon is not None:
        _dp_schema_draft(df, label, epsilon, delta, range_, quantiles, categorical, ledger, dataset_id, budget, seed)
        return
    if any(v is not None for v in (delta, categorical, ledger, dataset_id, budget, seed)) or range_:
        _err("--delta, --range, --categorical, --ledger, --dataset-id, --budget and --seed apply to the private "
             "draft: give --epsilon")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotPrivateWarning)
        s = draft_schema(df, label=label)
    typer.echo(
        "warning: drafting read the data; the bounds and categories below are NOT private. Review them and "
        "replace them with public knowledge (documentation, domain ranges) before any release.",
        err=True,
    )
    typer.echo("# DRAFT read from the data (not private): review every bound and level before releasing\n"
               + s.to_yaml(), nl=False)


def _number_pair(text: str, what: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        _err(f"{what} expects two numbers lo,hi, got '{text}'")
    return lo, hi


def _dp_schema_draft(df, label, epsilon, delta, range_, quantiles, categorical, ledger, dataset_id, budget, seed):
    """``schema draft --epsilon``: a DP draft, charged to the ledger when one is given."""
    import contextlib
    import dataclasses

    from ..dp.draft import dp_draft_schema, draft_cost
    from ..dp.costs import PrivacyCost
    from ..release import default_delta, default_total_delta, parse_budget

    ranges = {}
    for item in range_:
        col, _, text = item.rpartition("=")
        ranges[col or "*"] = _number_pair(text, "--range")
    qs = _number_pair(quantiles, "--quantiles")
    cats = [c.strip() for c in categorical.split(",") if c.strip()] if categorical else []
    if delta is None:
        delta = default_delta(len(df))
    if (ledger is None) != (dataset_id is None):
        _err("--ledger and --dataset-id go together")
    if budget is not None and ledger is None:
        _err("--budget needs --ledger and --dataset-id")
    charge = contextlib.nullcontext(None)
    if ledger is not None:
        from ..accounting.ledger import Ledger

        led = Ledger(ledger)
        total = None
        if budget is not None:
            eps_t, delta_t = parse_budget(budget)
            if delta_t is None and led.budget(dataset_id) is None:
                delta_t = default_total_delta(len(df))
            total = eps_t if delta_t is None else PrivacyCost(eps_t, delta_t)
        cost = draft_cost(df, epsilon, delta, label=label, categorical=cats)
        charge = led.reserve(dataset_id, cost, budget=total, mechanism="schema-draft",
                             details={"quantiles": list(qs), "ranges": {k: list(v) for k, v in ranges.items()}})
    with charge as entry:
        sch, cost = dp_draft_schema(df, epsilon, delta, rng=seed, label=label, ranges=ranges, categorical=cats,
                                    quantiles=qs)
        if entry is not None:
            sch = dataclasses.replace(sch, provenance={**sch.provenance,
                                                       "ledger": {"dataset_id": dataset_id, "entry": entry}})
    typer.echo(f"drafted privately: {cost.epsilon:g}-DP" + (f" with delta {cost.delta:.3g}" if cost.delta else "")
               + (f", charged to {ledger} ({dataset_id}, entry {entry})" if entry is not None else
                  " (no ledger: record this spend yourself)")
               + ". Review the bounds and levels; every later release certificate repeats this provenance.",
               err=True)
    typer.echo("# DRAFT under differential privacy (see provenance): review before releasing\n" + sch.to_yaml(),
               nl=False)


@schema_app.command("check")
def schema_check(schema: Path = typer.Argument(..., help="Schema YAML/JSON to validate.")):
    """Validate a schema file and print its encoded width."""
    from ..schema import Encoder, Schema

    s = Schema.from_yaml(schema)
    e = Encoder(s)
    typer.echo(f"ok: {len(s.columns)} columns, {e.width} encoded columns "
               f"(p1={e.n_numeric} numeric, p2={e.n_categorical} categorical), label={s.label.name if s.label else None}")


@app.command()
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
        _err(f"{full_result(out, name)} holds a full result that a --quick slice would replace; "
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


@app.command("distributional-privacy")
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


@app.command()
def perturb(
    records: Path = typer.Argument(..., help="The owner's records (.csv, .csv.gz or .parquet)."),
    public: Path = typer.Option(..., "--public", help="Public labelled records (same columns plus the two labels)."),
    schema: Path = typer.Option(..., "--schema", "-s", help="Schema of the public table (features and the two labels)."),
    utility_label: str = typer.Option(..., "--utility-label", help="Utility label column (kept usable)."),
    privacy_label: str = typer.Option(..., "--privacy-label", help="Privacy label column (to hide)."),
    projection: str = typer.Option("jupa", "--projection", help="jupa, ruca, dca, mdr, pca, random-projection, full-dimensional."),
    out: Path = typer.Option(..., "--out", "-o", help="Perturbed records (written atomically)."),
    param: List[str] = typer.Option([], "--param", "-p", help="key=value: projection (n_components, rho0, rho1, rho1_prime, rho) or MMD (fine, lam, alpha, max_iter, update, sigma) parameter."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded targets for experiments (default: OS entropy)."),
    certificate: Optional[Path] = typer.Option(None, "--certificate", "-c", help="Write a certificate JSON here."),
):
    """Owner side (Zhuang-Chang): project RECORDS with a projection learned on public data, then MMD-perturb.

    NO formal privacy guarantee: the certificate says "none (empirical)"; measure attack accuracies with
    `privrelease reproduce zhuang-table`.
    """
    from ..errors import InputDataError
    from ..io import read_table, write_table
    from ..mechanisms import get_mechanism
    from ..schema import Encoder, Schema

    sch = Schema.from_yaml(schema)
    for lab in (utility_label, privacy_label):
        if lab not in sch.names:
            _err(f"label column '{lab}' is not in the schema")
    feats = [c for c in sch.names if c not in (utility_label, privacy_label)]
    enc = Encoder(sch, feats)
    pub = read_table(public, sch)
    own = read_table(records, sch)
    for name_, df_ in (("public", pub), ("records", own)):
        miss = [c for c in feats if c not in df_.columns]
        if miss:
            raise InputDataError(f"{name_} table lacks feature columns {miss}")
    params = _parse_params(param)
    mmd_keys = ("fine", "lam", "alpha", "max_iter", "update", "sigma")
    mmd = {key: params.pop(key) for key in list(params) if key in mmd_keys}
    cls = get_mechanism("jupa-mmd")
    mech = cls(public_X=enc.encode(pub).X, public_utility=pub[utility_label].astype(str).to_numpy(),
               public_privacy=pub[privacy_label].astype(str).to_numpy(), projection=projection,
               projection_params=params, rng=seed, **mmd).fit()
    Z = mech.transform(enc.encode(own).X)
    import pandas as pd

    write_table(pd.DataFrame(Z, columns=mech.output_columns_), out)
    if certificate is not None:
        from ..io import atomic_write
        from ..release import _jsonable

        cert = {"mechanism": cls.name, "guarantee": cls.guarantee, "neighbouring_relation": cls.relation,
                "epsilon": None, "parameters": {"projection": projection, **params, **mmd},
                "extra": mech.certificate_extra(), "notes": mech.notes_, "n_records": int(len(own)),
                "randomness": mech.source_.description}
        with atomic_write(certificate, "w") as fh:
            fh.write(json.dumps(_jsonable(cert), indent=2))
        from ..release import diagnostics_path

        private = {"warning": "PRIVATE: exact diagnostics of the owner's records; never publish",
                   **mech.private_diagnostics()}
        with atomic_write(diagnostics_path(certificate), "w") as fh:
            fh.write(json.dumps(_jsonable(private), indent=2))
    typer.echo(f"wrote {out} ({len(Z):,} records, {Z.shape[1]} columns; guarantee: none (empirical))", err=True)


# ---- privacy-budget ledger -------------------------------------------------------------

ledger_app = typer.Typer(no_args_is_help=True, help="Inspect and manage a privacy-budget ledger (SQLite file).")
app.add_typer(ledger_app, name="ledger")


def _open_ledger(path: Path, must_exist: bool = True):
    from ..accounting.ledger import Ledger

    if must_exist and not path.exists():
        _err(f"no ledger at {path}")
    return Ledger(path)


@ledger_app.command("show")
def ledger_show(
    ledger: Path = typer.Argument(..., help="The ledger file."),
    dataset_id: Optional[str] = typer.Option(None, "--dataset-id", help="Show one dataset and its entries."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
):
    """Print each dataset's total, spent (committed + pending) and remaining budget."""
    led = _open_ledger(ledger)
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


@ledger_app.command("declare")
def ledger_declare(
    ledger: Path = typer.Argument(..., help="The ledger file (created if absent)."),
    dataset_id: str = typer.Option(..., "--dataset-id", help="Dataset identifier."),
    epsilon: float = typer.Option(..., "--epsilon", help="Total epsilon of the dataset."),
    delta: float = typer.Option(0.0, "--delta", help="Total delta of the dataset (for (epsilon, delta)-DP releases)."),
):
    """Declare a dataset's total budget before its first release (needed for a total delta > 0)."""
    from ..dp.costs import PrivacyCost

    total = _open_ledger(ledger, must_exist=False).declare(dataset_id, PrivacyCost(epsilon, delta))
    typer.echo(f"{dataset_id}: total epsilon {total.epsilon:.6g}, delta {total.delta:.3g}")


@ledger_app.command("cancel")
def ledger_cancel(
    ledger: Path = typer.Argument(..., help="The ledger file."),
    entry_id: int = typer.Argument(..., help="Id of a PENDING entry (see `ledger show --dataset-id`)."),
    reason: str = typer.Option(..., "--reason", help="What you checked (e.g. 'no output file was written')."),
):
    """Cancel a pending entry left by a crash, after checking that its output does not exist."""
    _open_ledger(ledger).cancel_pending(entry_id, reason)
    typer.echo(f"entry {entry_id} cancelled")

def _example_inputs(example, real, released, schema, test):
    """REAL, RELEASED, schema and test file: the bundled ones with ``--example`` (then only RELEASED is given)."""
    if example is not None:
        from ..datasets import example_paths

        if schema is not None or test is not None or (real is not None and released is not None):
            _err("with --example give only RELEASED (the real table, schema and test file are the bundled ones)")
        released = released or real
        real, schema = example_paths(example)
        test = example_paths(example, "test")[0]
    if real is None or released is None or schema is None:
        _err("give REAL RELEASED --schema SCHEMA.yaml (or --example adult RELEASED)")
    return real, released, schema, test


@app.command()
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
    sdmetrics: bool = typer.Option(False, "--sdmetrics/--no-sdmetrics", help="Include SDMetrics' quality report "
                                   "(slow on wide tables)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file."),
):
    """Write ONE self-contained HTML quality report (plots, utility, certificate, ledger). It shows private
    statistics of REAL: NOT for publication."""
    from ..evaluation.fidelity import PRIVATE_NOTICE
    from ..evaluation.report import build_report
    from ..io import atomic_write, read_table
    from ..schema import Schema

    real, released, schema, test = _example_inputs(example, real, released, schema, test)
    if out.suffix.lower() not in (".html", ".htm"):
        _err(f"--out {out} must be an .html file")
    if out.is_dir():
        _err(f"--out {out} is a directory")
    if out.exists() and not overwrite:
        _err(f"{out} exists; pass --overwrite to replace it")
    if out.resolve() in {p.resolve() for p in (real, released, test, certificate, ledger) if p is not None}:
        _err(f"--out {out} is one of the inputs")
    cert = None
    if certificate is not None:
        try:
            cert = json.loads(certificate.read_text())
        except (OSError, ValueError) as exc:
            _err(f"cannot read the certificate {certificate}: {str(exc).splitlines()[0]}")
    state = None
    if ledger is not None:
        led = _open_ledger(ledger)
        state = [led.summary(i) for i in ([dataset_id] if dataset_id is not None else led.datasets())]
    typer.echo(f"note: {PRIVATE_NOTICE}", err=True)
    sch = Schema.from_yaml(schema)
    frames = {what: read_table(path, sch) for what, path in (("real", real), ("released", released), ("test", test))
              if path is not None}
    page = build_report(frames["real"], frames["released"], sch, test=frames.get("test"), label=label,
                        certificate=cert, ledger=state, sdmetrics=sdmetrics)
    with atomic_write(out, "w") as fh:
        fh.write(page)
    typer.echo(f"wrote {out} ({len(page) / 1e6:.1f} MB; shows private statistics: NOT for publication)", err=True)



def _print_warnings():
    """Show privrelease's warnings as one ``warning: ...`` line each on stderr (others as Python does)."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if _STATE.get("bar") is not None:
            _STATE["bar"].close()  # a warning starts on its own line, not inside the progress bar
        if isinstance(category, type) and issubclass(category, PrivReleaseWarning):
            typer.echo("warning: " + " ".join(str(message).split()), err=True)
        else:
            shown(message, category, filename, lineno, file, line)

    show.one_line = True
    if not getattr(shown, "one_line", False):  # main() may run several times in one process (tests)
        warnings.showwarning = show
    warnings.simplefilter("default", PrivReleaseWarning)


def main(argv=None):
    """Entry point: one-line errors and warnings, clean interruption."""
    _print_warnings()
    try:
        code = app(args=argv, standalone_mode=False)  # without standalone mode, typer.Exit(n) is returned
        if isinstance(code, int) and code:
            if code == 130:  # typer turns Ctrl-C into Exit(130)
                typer.echo("interrupted: nothing was written", err=True)
            sys.exit(code)
    except PrivReleaseError as exc:
        if _STATE["debug"]:
            traceback.print_exc()
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted: nothing was written", err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(1)
    except Exception as exc:  # click usage errors and unexpected failures: one line
        if type(exc).__name__ == "NoArgsIsHelpError":  # help was printed
            sys.exit(0)
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):  # click usage errors (typer may vendor click)
            exc.show()
            sys.exit(exc.exit_code)
        if _STATE["debug"]:
            traceback.print_exc()
        typer.echo(f"error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", err=True)
        sys.exit(1)


# ---- evaluation of a release against the real table (reads private data) ---------------------

@app.command("evaluate")
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
):
    """Measure how faithful RELEASED is to REAL. Reads the private data: the output is NOT for publication."""
    from ..evaluation.fidelity import PRIVATE_NOTICE, evaluate
    from ..io import atomic_write, read_table
    from ..schema import Schema

    real, released, schema, test = _example_inputs(example, real, released, schema, test)
    if json_out is not None and json_out.is_dir():
        _err(f"--json {json_out} is a directory")
    typer.echo(f"note: {PRIVATE_NOTICE}", err=True)
    sch = Schema.from_yaml(schema)
    frames = {what: read_table(path, sch) for what, path in (("real", real), ("released", released), ("test", test))
              if path is not None}
    ev = evaluate(frames["real"], frames["released"], sch, test=frames.get("test"), label=label,
                  sdmetrics=not no_sdmetrics)
    typer.echo(ev.to_table())
    if json_out is not None:
        with atomic_write(json_out, "w") as fh:
            fh.write(json.dumps(ev.to_dict(), indent=2))
        typer.echo(f"wrote {json_out} (private: not for publication)", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
