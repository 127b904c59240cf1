"""tcrex: counterfactual rules and metarules (T-CREx, Bewley et al., ICML 2024) for any black-box model.

>>> from tcrex import TCREx
>>> ex = TCREx(rho=0.02, tau=0.9).fit(X, model)      # doctest: +SKIP
>>> ex.explain(X_test)                               # doctest: +SKIP
"""
from ._errors import (CellLimitError, DataError, ModelError, NoValidRuleError, NotFittedError, ParameterError,
                      SchemaError, TCRExError)
from ._explainer import STATUSES, LocalExplanation, TCREx

__version__ = "0.1.0"

__all__ = ["TCREx", "LocalExplanation", "STATUSES", "TCRExError", "DataError", "ModelError", "ParameterError",
           "NoValidRuleError", "CellLimitError", "NotFittedError", "SchemaError", "__version__"]
