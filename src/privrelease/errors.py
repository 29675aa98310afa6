"""Exception and warning types.

Every error a user can cause derives from :class:`PrivReleaseError`; the CLI prints
its message on one line (no traceback unless ``--debug``). Every warning derives from
:class:`PrivReleaseWarning`; the CLI prints it as one ``warning: ...`` line on stderr.
Values taken from the data are shown through :func:`shorten`, so that a message stays
one readable line whatever the data hold. A message that names a parameter names it through
:func:`option`, so that a Python caller reads the argument (``overwrite=True``) and the command
line the flag (``--overwrite``).
"""

import re

MAX_VALUE_CHARS = 80
_OPTION = re.compile(r"\{\{([^|{}]*)\|([^|{}]*)\}\}")


def option(api: str, flag: str) -> str:
    """A parameter named inside a message: ``api`` for Python callers, ``flag`` on the command line.

    >>> msg = f"pass {option('overwrite=True', '--overwrite')} to replace it"
    >>> api_text(msg), cli_text(msg)
    ('pass overwrite=True to replace it', 'pass --overwrite to replace it')
    """
    return "{{" + api + "|" + flag + "}}"


def api_text(message: str) -> str:
    """A message as a Python caller reads it (see :func:`option`)."""
    return _OPTION.sub(r"\1", message)


def cli_text(message: str) -> str:
    """A message in the command line's words (see :func:`option`)."""
    return _OPTION.sub(r"\2", message)


def shorten(value, limit: int = MAX_VALUE_CHARS) -> str:
    """``repr``-like text of a value from the data, cut to about ``limit`` characters, on one line.

    >>> len(shorten("x" * 20000)), shorten("x" * 20000)[-24:]
    (81, "... (20,000 characters)'")
    >>> shorten("a\\nb")
    "'a\\\\nb'"
    """
    text = repr(value) if isinstance(value, str) else str(value)
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    if len(text) <= limit:
        return text
    n = len(value) if isinstance(value, str) else len(text)
    tail = f"... ({n:,} characters)"
    return text[: max(limit - len(tail), 10)] + tail + ("'" if isinstance(value, str) else "")


def shorten_list(values, limit: int = 10) -> str:
    """At most ``limit`` values, each shortened, as a one-line list (``...`` when some are left out)."""
    values = list(values)
    shown = [shorten(v) for v in values[:limit]] + (["..."] if len(values) > limit else [])
    return "[" + ", ".join(shown) + "]"


class PrivReleaseError(Exception):
    """Base class of every error a user can trigger (``str()`` in the API's words,
    :meth:`cli_message` in the command line's)."""

    def _raw(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else Exception.__str__(self)

    def __str__(self):
        return api_text(self._raw())

    def cli_message(self) -> str:
        return cli_text(self._raw())


class SchemaError(PrivReleaseError, ValueError):
    """The schema is malformed, or the data do not match it."""


class InputDataError(PrivReleaseError, ValueError):
    """The input table cannot be released as it is (NaN, empty, unknown category, ...)."""


class ParameterError(PrivReleaseError, ValueError):
    """A mechanism parameter (epsilon, n_components, ...) is invalid."""


class BudgetExceededError(PrivReleaseError):
    """A release would spend more privacy budget than the ledger allows."""


class UnknownMechanismError(PrivReleaseError, KeyError):
    """No mechanism is registered under the given name."""

    def _raw(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class PrivReleaseWarning(UserWarning):
    """Base class of the warnings privrelease issues (printed as one line by the CLI)."""


class DataWarning(PrivReleaseWarning):
    """The data were altered or look wrong for the release (values clipped, extra columns, one class)."""


class PrivateDataWarning(DataWarning):
    """A data warning present or absent because of single records (values clipped, a one-class label): an
    exact fact of the private input. Its text starts with :data:`PRIVATE_PREFIX`; a release keeps it in the
    private diagnostics, and the CLI shows it only when it writes no diagnostics file."""


PRIVATE_PREFIX = "PRIVATE (depends on single records of the input; keep out of shared logs): "


class NotPrivateWarning(PrivReleaseWarning):
    """An operation read the private data without spending budget (e.g. schema drafting)."""


class OutputError(PrivReleaseError):
    """An output (table, certificate, diagnostics) cannot be written where it was asked for."""


class BudgetWarning(PrivReleaseWarning):
    """The budget is spent again, still held by an unfinished release, or too small for the table."""


class WeakPrivacyWarning(UserWarning):
    """A release is asked for with privacy parameters that protect little (e.g. epsilon > 10)."""
