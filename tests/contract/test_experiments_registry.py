"""The reproductions registry is an explicit tuple naming every reproduction, imported lazily.

A reproduction is a public function of a module of ``privrelease.experiments`` whose parameters
start ``(out_dir, data_dir, quick, seed, progress)``; ``REPRODUCTIONS`` names each one once, by
``"module:function"``, and nothing fills the registry as an import side effect.
"""

import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import privrelease.experiments as experiments
from privrelease.errors import PrivReleaseError
from privrelease.experiments import REPRODUCTIONS, get_reproduction, list_reproductions

PROTOCOL = ["out_dir", "data_dir", "quick", "seed", "progress"]
SRC = str(Path(experiments.__file__).resolve().parents[2])
HEAVY = ("sklearn", "scipy", "matplotlib", "numba", "pandas", "numpy")


def _runners_defined():
    """``"module:function"`` of every function in the package that follows the reproduction protocol."""
    found = set()
    for info in pkgutil.iter_modules(experiments.__path__):
        module = importlib.import_module(f"{experiments.__name__}.{info.name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(obj) or obj.__module__ != module.__name__:
                continue
            if list(inspect.signature(obj).parameters)[: len(PROTOCOL)] == PROTOCOL:
                found.add(f"{info.name}:{name}")
    return found


def test_every_reproduction_function_is_listed_once():
    targets = [r.target for r in REPRODUCTIONS]
    assert len(targets) == len(set(targets))
    assert _runners_defined() == set(targets)


@pytest.mark.parametrize("rep", REPRODUCTIONS, ids=lambda r: r.name)
def test_listed_runner_imports_and_takes_the_quick_call(rep, tmp_path):
    """The entry resolves to its module's function, which accepts the call ``reproduce NAME --quick`` makes."""
    module, _, function = rep.target.partition(":")
    run = rep.run
    assert callable(run) and run.__module__ == f"{experiments.__name__}.{module}" and run.__name__ == function
    inspect.signature(run).bind(tmp_path, data_dir=None, quick=True, seed=0, progress=print)
    paper = getattr(importlib.import_module(run.__module__), "PAPER", None)
    if isinstance(paper, str):  # the module writes this into its JSON; the listing must say the same
        assert rep.paper == paper


def test_lookup_is_by_name_and_listing_sorted():
    names = [r.name for r in list_reproductions()]
    assert names == sorted(names) and len(names) == len(set(names)) == len(REPRODUCTIONS)
    for rep in REPRODUCTIONS:
        assert get_reproduction(rep.name) is rep
    with pytest.raises(PrivReleaseError, match="unknown reproduction 'nope'; available: gauss-pca-bench, "):
        get_reproduction("nope")


def test_no_registration_side_effects_left():
    registry = importlib.import_module("privrelease.experiments.registry")
    assert not hasattr(registry, "reproduction")
    assert importlib.util.find_spec("privrelease.experiments._load_all") is None


def test_listing_imports_no_reproduction_module_nor_numerical_library():
    code = ("import sys\nfrom privrelease.cli.app import main\n"
            "try:\n    main(['reproduce', '--list'])\nexcept SystemExit:\n    pass\n"
            "print('LOADED', ' '.join(m for m in sys.modules if m.split('.')[0] in %r\n"
            "      or (m.startswith('privrelease.experiments.') and not m.endswith('.registry'))))" % (HEAVY,))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"})
    assert "zhou-privacy-loss" in out.stdout, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "LOADED", out.stdout.splitlines()[-1]
