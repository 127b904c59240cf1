"""The error classes of tcrex, by their public name (``from tcrex.errors import ParameterError``)."""
from ._errors import (CellLimitError, DataError, ModelError, NoValidRuleError, NotFittedError,  # noqa: F401
                      ParameterError, SchemaError, TCRExError)

__all__ = ["TCRExError", "DataError", "ModelError", "ParameterError", "NoValidRuleError", "CellLimitError",
           "NotFittedError", "SchemaError"]
