"""Parameter and fitted-state checks shared by :class:`TCREx` and the intake (one owner each)."""
from __future__ import annotations

import numbers

from ._data import check_special_codes_param
from ...codebook import check_value_labels
from ...errors import ParameterError, not_fitted
from ._outputs import check_task
from ...text import shown


#: Hard caps on the size parameters (the one owner; docs/engine.md and docs/security.md). No real use comes near
#: them — the paper uses one tree, the dashboard's form stops at 50 trees and 5,000,000 cells — while beyond them a
#: fit would keep a machine busy for hours (trees) or need tens of GB (cells: several int64 arrays per cell).
MAX_TREES = 1_000
MAX_CELLS = 50_000_000
#: The default ``max_changes``: no verified advice changes more features (chosen from measurements: the
#: benchmark ``benchmarks/short_advice.py``, docs/benchmarks.md "Short advice and special codes").
MAX_CHANGES = 3


def check_parameter(name: str, value) -> None:
    """Raise :class:`tcrex.errors.ParameterError` with a clear message when ``value`` is not usable for the TCREx
    parameter ``name``; the one owner of these rules (TCREx.fit and the intake both call it)."""
    if name == "rho":
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not 0 < value <= 1:
            raise ParameterError(f"rho must be a fraction in (0, 1], got {shown(value)} (the paper uses 0.02)")
    elif name == "tau":
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not 0 < value <= 1:
            raise ParameterError(f"tau must be a fraction in (0, 1], got {shown(value)} (the paper uses 0.9 or 0.99)")
    elif name in ("n_trees", "max_cells"):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ParameterError(f"{name} must be a whole number >= 1, got {shown(value)}")
        cap = MAX_TREES if name == "n_trees" else MAX_CELLS
        if value > cap:
            what = ("surrogate trees would take hours to grow and give an unreadable rule set" if name == "n_trees"
                    else "grid cells would need tens of GB of memory")
            shown_value = f"{value:,}" if value < 10**30 else shown(value)
            raise ParameterError(f"{name} = {shown_value} is above the limit of {cap:,}: that many {what}")
    elif name == "max_changes":
        if value is not None and (not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1):
            raise ParameterError(f"max_changes must be None (no limit) or a whole number >= 1, got {shown(value)}")
    elif name == "special_codes":
        check_special_codes_param(value)
    elif name == "task":
        check_task(value)
    elif name == "value_labels":
        check_value_labels(value)  # its shape; fit matches it to the data
    elif name == "grower":
        if value not in ("auto", "exact", "hist"):
            raise ParameterError(f"grower must be 'auto', 'exact' or 'hist', got {value!r}")


def check_fitted(explainer) -> None:
    """Raise :class:`tcrex.errors.NotFittedError` (a clear message) unless ``explainer`` is fitted or restored."""
    fitted = getattr(explainer, "__sklearn_is_fitted__", None)
    if fitted is None or not fitted():
        raise not_fitted(f"this {type(explainer).__name__} explainer is not fitted yet; call fit(X, model) or "
                             "from_json(text)")
