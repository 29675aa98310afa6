"""Exception and warning types.

Every error a user can cause derives from :class:`PrivReleaseError`; the CLI prints
its message on one line (no traceback unless ``--debug``). Every warning derives from
:class:`PrivReleaseWarning`; the CLI prints it as one ``warning: ...`` line on stderr.
Values taken from the data are shown through :func:`shorten`, so that a message stays
one readable line whatever the data hold.
"""

MAX_VALUE_CHARS = 80


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
    """Base class of every error a user can trigger."""


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

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class PrivReleaseWarning(UserWarning):
    """Base class of the warnings privrelease issues (printed as one line by the CLI)."""


class DataWarning(PrivReleaseWarning):
    """The data were altered or look wrong for the release (values clipped, extra columns, one class)."""


class NotPrivateWarning(PrivReleaseWarning):
    """An operation read the private data without spending budget (e.g. schema drafting)."""


class OutputError(PrivReleaseError):
    """An output (table, certificate, diagnostics) cannot be written where it was asked for."""


class WeakPrivacyWarning(UserWarning):
    """A release is asked for with privacy parameters that protect little (e.g. epsilon > 10)."""
