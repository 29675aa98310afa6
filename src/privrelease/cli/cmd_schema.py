"""``privrelease schema draft`` (from the data: read, or under differential privacy) and ``schema check``."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import List, Optional

import typer

from .common import err, interrupt_notes, number_pair


def schema_draft(
    input: Path = typer.Argument(..., help="A table to draft a schema from."),
    label: Optional[str] = typer.Option(None, "--label", help="Column to mark as the label."),
    columns: Optional[str] = typer.Option(None, "--columns", help="Comma-separated columns to draft (default: "
                                          "all); the others are not read, not charged and not in the schema."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", "-e", help="Draft under differential privacy with this "
                                            "epsilon (every decision stated or charged). Without it the draft "
                                            "reads the data and is NOT private."),
    delta: Optional[float] = typer.Option(None, "--delta", help="DP draft: delta for the selection of "
                                          "categorical levels (default min(1e-5, 1/(10 n)))."),
    range_: List[str] = typer.Option([], "--range", help="DP draft: the public bounds lo,hi of every numeric "
                                     "column, or COLUMN=lo,hi (numbers or ISO dates; repeatable): set as "
                                     "stated, no budget spent on them."),
    quantiles: str = typer.Option("0.01,0.99", "--quantiles", help="DP draft: the quantiles that become the "
                                  "lower and upper bounds."),
    numeric: Optional[str] = typer.Option(None, "--numeric", help="Comma-separated numeric columns (a public fact)."),
    integer: Optional[str] = typer.Option(None, "--integer", help="Comma-separated numeric columns of whole numbers."),
    categorical: Optional[str] = typer.Option(None, "--categorical", help="Comma-separated categorical columns."),
    datetime: Optional[str] = typer.Option(None, "--datetime", help="Comma-separated date columns (ISO dates); "
                                           "COLUMN=hour (minute, second) states the step of a date-time column "
                                           "(else the DP draft writes step: day)."),
    time: Optional[str] = typer.Option(None, "--time", help="Comma-separated time-of-day columns (13:45, "
                                       "13:45:30); COLUMN=second (hour) states the step (default minute)."),
    levels: Optional[Path] = typer.Option(None, "--levels", help="YAML file COLUMN: [level, ...] of declared "
                                          "(public) levels, the whole domain: no budget spent on those columns."),
    complete: Optional[str] = typer.Option(None, "--complete", help="Columns without missing values (public)."),
    ledger: Optional[Path] = typer.Option(None, "--ledger", help="DP draft: charge the draft to this ledger."),
    dataset_id: Optional[str] = typer.Option(None, "--dataset-id", help="DP draft: dataset identifier in the ledger."),
    budget: Optional[str] = typer.Option(None, "--budget", help="DP draft: total budget EPS[,DELTA] declared "
                                         "for the dataset at its first use of the ledger."),
    seed: Optional[int] = typer.Option(None, "--seed", help="DP draft: seeded noise (NOT for real use)."),

    sep: Optional[str] = typer.Option(None, "--sep", help="CSV delimiter (default: found from the header line "
                                      "among , ; tab |; 'tab' or '\\t' for a tab)."),
    encoding: Optional[str] = typer.Option(None, "--encoding", help="CSV text encoding (default UTF-8), e.g. latin-1."),
):
    """Print a YAML schema draft for review: private with --epsilon, otherwise read from the data (NOT private)."""
    from ..errors import NotPrivateWarning
    from ..schema import draft_schema_dict
    from ..schema.values import StatedFacts

    (dates, steps), (times, time_steps) = _dates(datetime), _dates(time, "--time", ("hour", "minute", "second"))
    df, facts = _table_and_facts(input, sep, encoding, columns, StatedFacts.of(
        label, _names(numeric), _names(categorical), dates, _names(integer), _levels(levels), _names(complete),
        steps={**steps, **time_steps}, time=times))
    if epsilon is not None:
        _dp_schema_draft(df, facts, epsilon, delta, range_, quantiles, ledger, dataset_id, budget, seed)
        return
    if any(v is not None for v in (delta, ledger, dataset_id, budget, seed)) or range_:
        err("--delta, --range, --ledger, --dataset-id, --budget and --seed apply to the private draft: give --epsilon")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotPrivateWarning)
        d = draft_schema_dict(df, facts=facts)
    typer.echo(
        "warning: drafting read the data; the bounds and categories below are NOT private. Review them and "
        "replace them with public knowledge (documentation, domain ranges) before any release.",
        err=True,
    )
    typer.echo("# DRAFT read from the data (not private): review every bound and level before releasing\n"
               + _yaml(d), nl=False)


def _table_and_facts(input: Path, sep, encoding, columns: Optional[str], facts):
    """The table to draft (every column, or those ``--columns`` names) as text, and the stated facts
    with a Parquet file's declared kinds of those columns (public facts: its Arrow schema)."""
    from ..io import read_table
    from ..io.tables import input_format
    from ..schema.values import declared_facts

    df = read_table(input, sep=sep, encoding=encoding, as_text=True)
    if columns is not None:
        chosen = _names(columns)
        unknown = [c for c in chosen if c not in df.columns]
        if unknown or not chosen:
            err(f"--columns names {unknown} that the table does not have" if unknown else "--columns names no column")
        df = df[list(dict.fromkeys(chosen))]
    if input_format(input)[0] == "parquet":  # a typed file declares its columns' kinds (public facts)
        import pyarrow as pa
        import pyarrow.parquet as pq

        arrow = pq.read_schema(input)
        facts = facts.merged(declared_facts(pa.schema([f for f in arrow if f.name in df.columns])))
    return df, facts


def _range_pair(text: str) -> tuple:
    """``--range lo,hi``: two numbers, or two ISO dates (kept as text; checked by the draft)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) == 2 and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}.*", p) for p in parts):
        return parts[0], parts[1]
    return number_pair(text, "--range (two numbers or two ISO dates)")


def _names(text: Optional[str]) -> list:
    """A comma-separated list of column names."""
    return [c.strip() for c in text.split(",") if c.strip()] if text else []


def _dates(text: str | None, option: str = "--datetime", units=None) -> tuple[list, dict]:
    """``--datetime a,b=minute`` (or ``--time``): the columns, and the steps stated for some of them."""
    from ..schema.dates import UNITS

    units = tuple(units or UNITS)
    names, steps = [], {}
    for item in _names(text):
        name, _, step = (x.strip() for x in item.partition("="))
        if step and step not in units:
            err(f"{option} {item}: the step of such a column is one of {', '.join(units)}, got {step!r}")
        names.append(name)
        if step:
            steps[name] = step
    return names, steps


def _levels(path: Optional[Path]) -> dict:
    """``--levels FILE``: a YAML mapping of column -> list of levels."""
    if path is None:
        return {}
    import yaml

    from ..schema.values import is_empty_level

    try:
        d = yaml.safe_load(path.read_text())
    except OSError as exc:
        err(f"cannot read --levels file {path}: {exc.strerror or exc}")
    except yaml.YAMLError as exc:
        err(f"--levels file {path} is not valid YAML: {str(exc).splitlines()[0]}")
    if not isinstance(d, dict) or not all(isinstance(v, list) and v for v in d.values()):
        err(f"--levels file {path} must map each column to a non-empty list of levels")
    empty = [str(c) for c, v in d.items() if any(is_empty_level(lv) for lv in v)]
    if empty:
        err(f"--levels file {path} lists an empty level for {', '.join(empty)}: an empty cell is a missing value, "
            f"not a level; take it out (the draft writes missing: allowed where the column has missing values)")
    return d


def _yaml(d: dict) -> str:
    import yaml

    return yaml.safe_dump(d, sort_keys=False, default_flow_style=None, width=100, allow_unicode=True)


def _dp_schema_draft(df, facts, epsilon, delta, range_, quantiles, ledger, dataset_id, budget, seed):
    """``schema draft --epsilon``: a DP draft, charged to the ledger when one is given."""
    import contextlib

    from ..dp.draft import dp_draft, draft_cost
    from ..dp.costs import PrivacyCost
    from ..release import default_delta, default_total_delta, parse_budget

    ranges = {}
    for item in range_:
        col, _, text = item.rpartition("=")
        if "=" in col:
            err(f"--range '{item}' states more than one column: give each its own --range COLUMN=lo,hi")
        ranges[col or "*"] = _range_pair(text)
    qs = number_pair(quantiles, "--quantiles")
    if delta is None:
        delta = default_delta(len(df))
    if (ledger is None) != (dataset_id is None):
        err("--ledger and --dataset-id go together")
    if budget is not None and ledger is None:
        err("--budget needs --ledger and --dataset-id")
    charge = contextlib.nullcontext(None)
    cost = draft_cost(df.columns, epsilon, delta, facts, len(df))
    if ledger is not None:
        from ..accounting.ledger import Ledger

        led = Ledger(ledger)
        total = None
        if budget is not None:
            eps_t, delta_t = parse_budget(budget)
            if delta_t is None and led.budget(dataset_id) is None:
                delta_t = default_total_delta(len(df))
            total = eps_t if delta_t is None else PrivacyCost(eps_t, delta_t)
        charge = led.reserve(dataset_id, cost, budget=total, mechanism="schema-draft",
                             details={"quantiles": list(qs), "ranges": {k: list(v) for k, v in ranges.items()}},
                             released=lambda: False)  # the draft is printed after the block
    with interrupt_notes(), charge as entry:
        d = dp_draft(df, epsilon, delta, rng=seed, facts=facts, ranges=ranges, quantiles=qs)
        if entry is not None:
            d.schema["provenance"]["ledger"] = {"dataset_id": dataset_id, "entry": entry}
    for line in d.warnings:
        typer.echo(f"warning: {line}", err=True)
    cost = d.cost
    typer.echo(f"drafted privately: {cost.epsilon:g}-DP" + (f" with delta {cost.delta:.3g}" if cost.delta else "")
               + (f", charged to {ledger} ({dataset_id}, entry {entry})" if entry is not None else
                  " (no ledger: record this spend yourself)")
               + ". Review the bounds and levels; every later release certificate repeats this provenance.",
               err=True)
    typer.echo("# DRAFT under differential privacy (see provenance): review before releasing\n" + d.to_yaml(),
               nl=False)


def schema_check(schema: Path = typer.Argument(..., help="Schema YAML/JSON to validate.")):
    """Validate a schema file and print its encoded width."""
    from ..schema import Encoder, Schema

    s = Schema.from_yaml(schema)
    e = Encoder(s)
    typer.echo(f"ok: {len(s.columns)} columns, {e.width} encoded columns "
               f"(p1={e.n_numeric} numeric, p2={e.n_categorical} categorical), label={s.label.name if s.label else None}")
