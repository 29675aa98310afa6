"""Start-up cost of the command line: ``--help`` must not import the numerical stack."""

import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
HEAVY = ("sklearn", "scipy", "matplotlib", "numba", "pandas", "numpy")


def _modules_after(code: str) -> set:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True, env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"})
    return {m.split(".")[0] for m in out.stdout.split()}


def test_importing_the_cli_imports_no_numerical_library():
    """Pins the slow ``--help`` (about 1.5 s of CPU): importing ``privrelease.cli.app`` imported
    scikit-learn, scipy, pandas and numpy through ``privrelease/__init__``."""
    loaded = _modules_after("import privrelease.cli.app")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_help_runs_without_the_numerical_stack():
    out = subprocess.run([sys.executable, "-c", "import sys\nfrom privrelease.cli.app import main\n"
                          "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
                          "print('LOADED', ' '.join(m for m in sys.modules if m.split('.')[0] in %r))" % (HEAVY,)],
                         capture_output=True, text=True, env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"})
    assert "release" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "LOADED", out.stdout.splitlines()[-1]


def test_package_names_resolve_lazily():
    import privrelease
    import privrelease.release  # noqa: F401  (binding the submodule must not shadow the function)
    from privrelease import Certificate, Schema, release

    assert callable(release) and privrelease.release is release
    assert Schema.__name__ == "Schema" and Certificate.__name__ == "Certificate"


def _release_with_cache(tmp_path, cache_dir):
    code = ("from privrelease import release\nfrom privrelease.datasets import load_example\n"
            "df, s = load_example('adult')\n"
            "release(df.head(400), s, mechanism='jiang-lda', epsilon=1.0, rng=0)\n")
    env = {"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": str(cache_dir), "HOME": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_compiled_kernel_is_cached_on_disk(tmp_path):
    """The jiang-lda kernel is compiled once per installation: the first release writes numba's
    cache index, which a second process reuses."""
    cache = tmp_path / "numba-cache"
    _release_with_cache(tmp_path, cache)
    assert list(cache.rglob("*.nbi")), "no numba cache index written"
    _release_with_cache(tmp_path, cache)  # loads the cached kernel


def test_kernel_compiles_when_no_cache_folder_is_writable(monkeypatch):
    """When numba can find no writable cache folder it refuses ``cache=True``; the release must not fail."""
    from privrelease.mechanisms.jiang import lda as jiang_lda

    class FakeNumba:
        calls = []

        @classmethod
        def njit(cls, cache, nogil):
            cls.calls.append(cache)
            if cache:
                raise RuntimeError("cannot cache function: no locator available")
            return lambda f: f

    assert jiang_lda._njit_cached(FakeNumba, len) is len
    assert FakeNumba.calls == [True, False]
