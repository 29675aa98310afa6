"""One release is one transaction: its table, certificate, private diagnostics and ledger charge
all take effect, or none does.

:class:`Transaction` checks every target before the data are touched (not the input,
not an existing file unless ``overwrite``, a writable folder: a temporary file is created
there at once), hands out those temporary files to write into, and moves them all into
place together in :meth:`Transaction.commit`, restoring what it replaced if a move fails.
On any failure the temporary files are removed. :func:`ledger_charge` reserves the cost in
the ledger around the whole block, so the charge is committed only after every file is in
place and cancelled when anything before fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from ..errors import OutputError, ParameterError, option
from ..dp.costs import PrivacyCost


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


class Transaction:
    """Temporary files beside each target, moved into place together (see the module docstring).

    Parameters
    ----------
    input_path : the private input file, or a list of them (no target may be one)
    targets : ``{name: final path}``
    overwrite : replace existing targets (otherwise an existing target is refused)
    private : names of targets only the owner may read (mode 0600)
    directories : names of targets that are directories (e.g. a Parquet dataset of part files):
        their temporary is a directory beside the target, renamed into place by the commit
    """

    def __init__(self, input_path, targets: dict, overwrite: bool = False, private: tuple = (),
                 directories: tuple = ()):
        self.targets = {k: Path(v) for k, v in targets.items()}
        self.private = set(private)
        self.directories = set(directories)
        self._check(input_path, overwrite)
        self.moving = False  # True from the first move into place on: an output may exist
        self.temps: dict[str, Path] = {}
        try:
            for name, path in self.targets.items():
                self.temps[name] = self._make_temp(name, path)
        except BaseException:
            self.abort()
            raise

    def _check(self, input_path, overwrite):
        paths = list(self.targets.values())
        inputs = [] if input_path is None else (
            [Path(p) for p in input_path] if isinstance(input_path, (list, tuple)) else [Path(input_path)])
        for name, path in self.targets.items():
            if any(_same_file(path, inp) for inp in inputs):
                raise OutputError(f"the {name} path {path} is the input file; choose another path")
            if path.is_dir() != (name in self.directories) and path.exists():
                kind = "a directory" if path.is_dir() else "a file, not a directory"
                raise OutputError(f"the {name} path {path} is {kind}")
            if path.exists() and not overwrite:
                raise OutputError(f"{path} exists; pass {option('overwrite=True', '--overwrite')} to replace it")
        if len({p.resolve() for p in paths}) != len(paths):
            raise OutputError(f"two outputs would be written to the same file: {[str(p) for p in paths]}")

    def _make_temp(self, name: str, path: Path) -> Path:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if name in self.directories:
                tmp = tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            else:
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                os.close(fd)
        except OSError as exc:
            raise OutputError(f"cannot write the {name} into {path.parent}: {exc.strerror or exc}") from None
        if name in self.directories:
            os.chmod(tmp, 0o777 & ~_umask())
        elif name not in self.private:  # mkstemp creates 0600; give shared outputs the usual permissions
            os.chmod(tmp, 0o666 & ~_umask())
        return Path(tmp)

    def temp(self, name: str) -> Path:
        return self.temps[name]

    def write_text(self, name: str, text: str):
        with open(self.temps[name], "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())

    def commit(self):
        """Move every temporary file into place; on a failure, restore what was replaced and raise."""
        done: list[tuple[Path, Path | None]] = []
        self.moving = True
        try:
            for name, path in self.targets.items():
                backup = None
                if path.exists():
                    backup = self._make_temp(name, path)
                    os.replace(path, backup)
                done.append((path, backup))
                os.replace(self.temps[name], path)
                self.temps.pop(name)
        except BaseException as exc:
            for path, backup in reversed(done):
                with contextlib.suppress(OSError):
                    if backup is not None:
                        os.replace(backup, path)
                    else:
                        path.unlink()
            if isinstance(exc, OSError):
                raise OutputError(f"cannot move the outputs into place ({exc.strerror or exc}); nothing was "
                                  f"released") from None
            raise
        for _, backup in done:
            if backup is not None:
                _remove(backup)

    def abort(self):
        for tmp in self.temps.values():
            _remove(tmp)
        self.temps = {}

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.abort()  # after a commit nothing is left to remove
        return False


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _remove(path: Path):
    """Remove a temporary file or directory (whatever is left of it)."""
    with contextlib.suppress(OSError):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


def check_ledger_args(ledger, dataset_id, budget):
    """A budget or a dataset id without a ledger would be silently ignored: refuse it."""
    if ledger is None and (budget is not None or dataset_id is not None):
        given = " and ".join(option(api, flag) for api, flag, v in (("budget", "--budget", budget),
                                                                     ("dataset_id", "--dataset-id", dataset_id))
                             if v is not None)
        raise ParameterError(f"{given} need(s) a ledger ({option('ledger=...', '--ledger FILE')}): without one "
                             f"nothing would be recorded or enforced")
    if ledger is not None and not dataset_id:
        raise ParameterError(f"a ledger needs a dataset id ({option('dataset_id=...', '--dataset-id')})")
    if budget is not None:
        parse_budget(budget)


def parse_budget(budget) -> tuple[float, float | None]:
    """``3``, ``"3"``, ``"3,1e-5"``, ``(3, 1e-5)`` or a PrivacyCost -> (total epsilon, total delta or None)."""
    if isinstance(budget, PrivacyCost):
        return budget.epsilon, budget.delta
    parts = budget.split(",") if isinstance(budget, str) else (
        list(budget) if isinstance(budget, (tuple, list)) else [budget])
    try:
        if not 1 <= len(parts) <= 2 or any(isinstance(x, bool) for x in parts):
            raise ValueError
        eps = float(parts[0])
        delta = float(parts[1]) if len(parts) == 2 else None
    except (TypeError, ValueError):
        raise ParameterError(f"a budget is a total epsilon or 'EPSILON,DELTA' (e.g. 3 or 3,1e-5), got {budget!r}") \
            from None
    if not (eps > 0 and eps < float("inf")):
        raise ParameterError(f"a total budget epsilon must be a finite number > 0, got {parts[0]!r}")
    if delta is not None and not (0 <= delta < 1):
        raise ParameterError(f"a total budget delta must be in [0, 1), got {parts[1]!r}")
    return eps, delta


@contextlib.contextmanager
def ledger_charge(ledger, dataset_id, budget, plan, released=lambda: False):
    """Reserve the plan's declared cost in the ledger for the block (nothing without a ledger).

    ``released`` says, on an interrupt, whether an output may have left the process (then the
    charge stays pending; otherwise it is cancelled): by default nothing has (an in-memory release
    returns its result only after the block).

    A budget given as a total epsilon only declares, at the dataset's first release, a total
    delta of :func:`~privrelease.release.construct.default_total_delta` (n) (room for ten
    releases at the default delta); on later releases it is compared with the stored epsilon.
    """
    check_ledger_args(ledger, dataset_id, budget)
    if ledger is None:
        yield None
        return
    from ..accounting.ledger import Ledger
    from .construct import default_total_delta, user_params

    led = ledger if isinstance(ledger, Ledger) else Ledger(ledger)
    if budget is not None:
        eps, delta = parse_budget(budget)
        if delta is None and led.budget(dataset_id) is None:
            delta = default_total_delta(plan.n)
        budget = eps if delta is None else PrivacyCost(eps, delta)
    mech = plan.mechanism
    with led.reserve(dataset_id, plan.declared_cost, budget=budget, mechanism=mech.name,
                     details=user_params(mech), released=released) as entry:
        yield entry
