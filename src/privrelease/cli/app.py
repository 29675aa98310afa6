"""Command-line interface (thin: every command calls the library).

This module holds the entry point (:func:`main`, the ``privrelease`` console script) and the
table of commands; each command lives in a ``cmd_*`` module of this package and imports the
library inside its body, so that ``privrelease --help`` loads no numerical library.
"""

from __future__ import annotations

import sys
import traceback
import warnings

import typer

from .._version import __version__
from ..errors import PrivReleaseError, PrivReleaseWarning, cli_text
from . import cmd_ledger, cmd_papers, cmd_perturb, cmd_quality, cmd_release, cmd_schema
from .common import STATE

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="privrelease: release a sensitive table as synthetic records with a differential privacy guarantee, "
    "a certificate that states it, and a budget ledger.\n\n"
    "The default mechanism, gauss-copula, releases DP one-way histograms of every column on cells from the "
    "schema, a Gaussian copula and a privately chosen tree of measured column pairs (`privrelease mechanisms` "
    "lists the others).\n\n"
    "Start with: privrelease release --example adult --epsilon 1 --out released.csv --certificate cert.json",
)
schema_app = typer.Typer(no_args_is_help=True, help="Draft and check schemas (the public description of a table).")
ledger_app = typer.Typer(no_args_is_help=True, help="Inspect and manage a privacy-budget ledger (SQLite file).")

# The commands: a release's workflow (typer lists the schema and ledger groups after the commands), then
# the papers' in a panel of their own.
app.command()(cmd_release.release)
app.add_typer(schema_app, name="schema")
schema_app.command("draft")(cmd_schema.schema_draft)
schema_app.command("check")(cmd_schema.schema_check)
app.command("evaluate")(cmd_quality.evaluate_cmd)
app.command()(cmd_quality.report)
app.add_typer(ledger_app, name="ledger")
ledger_app.command("show")(cmd_ledger.ledger_show)
ledger_app.command("declare")(cmd_ledger.ledger_declare)
ledger_app.command("cancel")(cmd_ledger.ledger_cancel)
app.command()(cmd_release.mechanisms)
PAPERS = "The papers' mechanisms"  # a panel of its own, after the release's commands
app.command(rich_help_panel=PAPERS)(cmd_papers.reproduce)
app.command("distributional-privacy", rich_help_panel=PAPERS)(cmd_papers.distributional_privacy)
app.command(rich_help_panel=PAPERS)(cmd_perturb.perturb)

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
    STATE["debug"] = debug


_PYTHON_SHOW = {"show": warnings.showwarning}  # what shows the warnings that are not privrelease's


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Show a privrelease warning as one ``warning: ...`` line on stderr (others as Python does)."""
    if STATE["bar"] is not None:
        STATE["bar"].close()  # a warning starts on its own line, not inside the progress bar
    if isinstance(category, type) and issubclass(category, PrivReleaseWarning):
        typer.echo("warning: " + " ".join(cli_text(str(message)).split()), err=True)
    else:
        _PYTHON_SHOW["show"](message, category, filename, lineno, file, line)


def _print_warnings():
    """Show privrelease's warnings as one line each (installed once: main() may run several times in one
    process, as in the tests)."""
    if warnings.showwarning is not _show_warning:
        _PYTHON_SHOW["show"] = warnings.showwarning
        warnings.showwarning = _show_warning
    warnings.simplefilter("default", PrivReleaseWarning)


def _interrupted() -> str:
    """What an interruption left: nothing written, and what became of a ledger charge (said by the ledger)."""
    notes = STATE.pop("interrupt_notes", None) or []
    return "interrupted: nothing was written" + "".join(f"; {n}" for n in notes)


def main(argv=None):
    """Entry point: one-line errors and warnings, clean interruption."""
    _print_warnings()
    STATE.pop("interrupt_notes", None)
    try:
        code = app(args=argv, standalone_mode=False)  # without standalone mode, typer.Exit(n) is returned
        if isinstance(code, int) and code:
            if code == 130:  # typer turns Ctrl-C into Exit(130)
                typer.echo(_interrupted(), err=True)
            sys.exit(code)
    except PrivReleaseError as exc:
        if STATE["debug"]:
            traceback.print_exc()
        typer.echo(f"error: {exc.cli_message()}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo(_interrupted(), err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(1)
    except Exception as exc:  # click usage errors and unexpected failures: one line
        if type(exc).__name__ == "NoArgsIsHelpError":  # help was printed
            sys.exit(0)
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):  # click usage errors (typer vendors click privately)
            exc.show()
            sys.exit(exc.exit_code)
        if STATE["debug"]:
            traceback.print_exc()
        typer.echo(f"error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", err=True)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
