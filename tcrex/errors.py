"""Exception types raised by the engine.

Every error a user can trigger derives from :class:`TCRExError` (itself a ``ValueError``), so a UI can catch
one type and show the message. :class:`NotFittedError` is also scikit-learn's ``sklearn.exceptions.NotFittedError``
(``except`` clauses written for scikit-learn estimators catch ours). Messages say what to change, not only what went wrong. Import them from here
(``from tcrex.errors import ParameterError``).
"""

__all__ = ["TCRExError", "DataError", "ModelError", "ParameterError", "NoValidRuleError", "CellLimitError",
           "NotFittedError", "SchemaError", "InputFileError", "StoreError"]  # noqa: F822 - NotFittedError is built on first use (__getattr__)


class TCRExError(ValueError):
    """Base class for every documented engine error."""


class DataError(TCRExError):
    """The input data cannot be used as given (NaN, unknown categories, wrong columns, ...)."""


class ModelError(TCRExError):
    """The model, or the outputs supplied instead of a model, cannot be used."""


class ParameterError(TCRExError):
    """A hyperparameter is out of range or inconsistent with the task."""


class NoValidRuleError(TCRExError):
    """No candidate rule reaches both feasibility >= rho and accuracy >= tau (paper, footnote to step b)."""


class CellLimitError(TCRExError):
    """The metarule grid would exceed ``max_cells``; raised before the grid is built."""


class SchemaError(TCRExError):
    """A JSON document is not a valid ``tcrex-rules`` export."""


class InputFileError(DataError):
    """An input file cannot be read as given: it is missing, not a regular file (a device, a pipe), larger than its
    budget, a damaged or unsupported archive, or its path is unusable (:mod:`tcrex.inputs`)."""


class StoreError(TCRExError):
    """The workspace store cannot be used: its database refuses the connection or the password, the connection was
    lost, or its state folder is full, read-only or not a folder. The message names the store and what to do."""


def _not_fitted_error():
    # scikit-learn's NotFittedError is the base, so ``except sklearn.exceptions.NotFittedError`` catches ours. Importing
    # sklearn.exceptions runs sklearn/__init__ (scipy, about 1.5 s), so the class is built on first use (module
    # __getattr__ below): importing this module, e.g. for TCRExError in the CLI, does not load scikit-learn. The
    # engine's modules raise it through :func:`not_fitted`, never naming it at import, so a restored explainer that
    # is never asked for a missing fit loads no scikit-learn.
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError  # noqa: PLC0415 - on first use

    class NotFittedError(TCRExError, SklearnNotFittedError):
        """The explainer has not been fitted (or restored) yet."""

    NotFittedError.__module__, NotFittedError.__qualname__ = __name__, "NotFittedError"  # pickles by name
    return NotFittedError


def not_fitted(message: str) -> Exception:
    """A :class:`NotFittedError` with ``message``, to raise (the class is built on first use: see above)."""
    cls = globals().get("NotFittedError") or __getattr__("NotFittedError")
    return cls(message)


def __getattr__(name):
    if name == "NotFittedError":
        cls = globals()["NotFittedError"] = _not_fitted_error()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
