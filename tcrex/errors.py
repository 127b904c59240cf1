"""Exception types raised by the engine.

Every error a user can trigger derives from :class:`TCRExError` (itself a ``ValueError``), so a UI can catch
one type and show the message. Messages say what to change, not only what went wrong. Import them from here
(``from tcrex.errors import ParameterError``).
"""

__all__ = ["TCRExError", "DataError", "ModelError", "ParameterError", "NoValidRuleError", "CellLimitError",
           "NotFittedError", "SchemaError"]


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


class NotFittedError(TCRExError, AttributeError):
    """The explainer has not been fitted (or restored) yet."""


class SchemaError(TCRExError):
    """A JSON document is not a valid ``tcrex-rules`` export."""
