"""The house rules that keep the package readable: modules under about 500 lines, functions under
about 60, each exception named here with its reason, and no registry filled by import side effects."""

import ast
from pathlib import Path

import privrelease

SRC = Path(privrelease.__file__).parent
MAX_MODULE_LINES = 520  # "about 500"
MAX_FUNCTION_LINES = 60
#: Functions allowed above the limit, with the reason.
LONG_FUNCTIONS = {
    # numba compiles the sampler loop as one unit; splitting it would need numba at import time
    # (helpers must themselves be compiled), and --help is kept free of that import.
    "mechanisms/jiang/lda.py::_greedy_kernel",
}


def _sources():
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def test_modules_are_under_about_500_lines():
    long = {str(p.relative_to(SRC)): n for p in _sources() if (n := p.read_text().count("\n")) > MAX_MODULE_LINES}
    assert not long, long


def test_functions_are_under_60_lines():
    long = {}
    for p in _sources():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                key = f"{p.relative_to(SRC).as_posix()}::{node.name}"
                if n > MAX_FUNCTION_LINES and key not in LONG_FUNCTIONS:
                    long[key] = n
    assert not long, long


def test_the_allowed_exceptions_still_exist():
    """An exception that was fixed must leave the list (so the list stays true)."""
    for key in LONG_FUNCTIONS:
        path, name = key.split("::")
        tree = ast.parse((SRC / path).read_text())
        sizes = [n.end_lineno - n.lineno + 1 for n in ast.walk(tree)
                 if isinstance(n, ast.FunctionDef) and n.name == name]
        assert sizes and max(sizes) > MAX_FUNCTION_LINES, key
