"""The dpaudit error hierarchy.

Every error dpaudit raises on purpose derives from :class:`AuditError`; the CLI turns
them into a one-line message and exit code 2.
"""

from __future__ import annotations


class AuditError(Exception):
    """Base class of every error dpaudit raises on purpose."""


class InvalidParameterError(AuditError, ValueError):
    """Raised when a parameter, a configuration value or a file is malformed.

    The message names the input, what it must be, and what was given.
    """


class DataError(InvalidParameterError):
    """Raised when a dataset does not fit its public domain (NaN, wrong columns,
    non-numeric values, values outside the bounds, too few rows)."""


class NotFittedError(AuditError, ValueError, AttributeError):
    """Raised when `sample` or `privacy_claim_` is used before `fit`."""


class UnsupportedEventError(AuditError):
    """Raised when an accountant is given a privacy event it does not support."""


class PluginError(AuditError):
    """Raised when a user's generator cannot be loaded or breaks the plug-in contract."""


class StoreError(AuditError):
    """Raised when an audit directory holds a different audit, or is corrupt."""


class DpauditWarning(UserWarning):
    """Category of dpaudit's warnings (for example, bounds read from private data)."""
