"""Calling the CLI in-process from the integration tests."""

import pytest

from privrelease.cli.app import main


def run_cli(args, capsys):
    """Run ``privrelease ARGS``; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exc:
        main(list(args))
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err
