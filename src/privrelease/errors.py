"""Exception and warning types.

Every error a user can cause derives from :class:`PrivReleaseError`; the CLI prints
its message on one line (no traceback unless ``--debug``).
"""


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


class NotPrivateWarning(UserWarning):
    """An operation read the private data without spending budget (e.g. schema drafting)."""


class OutputError(PrivReleaseError):
    """An output (table, certificate, diagnostics) cannot be written where it was asked for."""


class WeakPrivacyWarning(UserWarning):
    """A release is asked for with privacy parameters that protect little (e.g. epsilon > 10)."""
