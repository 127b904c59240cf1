"""Check T-CREx hyperparameters before a (possibly long) fit, collecting every problem at once.

The engine validates its parameters too, but stops at the first problem and only when fitting; a form wants all
of them, up front, plus advice that is not an error (a very large forest, a tiny minimum rule size). The error
messages are the engine's own wherever it has one (each parameter is run through the engine's check on its own).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

from .. import check_parameter, check_rows_for_rho, min_rule_rows
from ..text import shown
from ..errors import ParameterError, TCRExError

__all__ = ["validate_params", "ParamReport"]

MANY_TREES = 200
MANY_CELLS = 5_000_000
FEW_ROWS_PER_RULE = 5


@dataclass
class ParamReport:
    errors: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def messages(self) -> list[str]:
        return self.errors + self.warnings

    def raise_if_invalid(self) -> None:
        if self.errors:
            raise ParameterError("; ".join(self.errors))


def _engine_message(**params) -> str | None:
    """The engine's own message for these parameters (others at their defaults), or None when it accepts them."""
    try:
        for name, value in params.items():
            check_parameter(name, value)
    except TCRExError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - e.g. comparing a string with a number
        return f"{next(iter(params))} has an unusable value {shown(next(iter(params.values())))} ({exc})"
    return None


def _is_number(v) -> bool:
    try:
        return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))
    except OverflowError:  # an integer beyond floats (10**400) is a number, but not a usable one
        return False


def validate_params(rho, tau, n_trees=1, max_cells=100_000, n_rows=None) -> ParamReport:
    """All problems with ``rho``, ``tau``, ``n_trees``, ``max_cells`` (and ``rho`` against ``n_rows``).

    Returns a :class:`ParamReport`: ``errors`` (the fit would fail) and ``warnings`` (it would run, but slowly or
    with fragile rules). Never raises; call ``raise_if_invalid()`` for a ParameterError listing every error.
    """
    rep = ParamReport()
    checks = (("rho", rho, "a fraction in (0, 1]"), ("tau", tau, "a fraction in (0, 1]"),
              ("n_trees", n_trees, "a whole number >= 1"), ("max_cells", max_cells, "a whole number >= 1"))
    valid = {}
    for name, value, what in checks:
        if isinstance(value, bool):
            rep.errors.append(f"{name} must be {what}, got {shown(value)} (a yes/no value)")
            continue
        msg = _engine_message(**{name: value})
        if msg is None and isinstance(value, numbers.Real) and not _is_number(value):
            msg = f"{name} must be {what}, got {shown(value)}"
        if msg:
            rep.errors.append(msg)
        else:
            valid[name] = value
    if n_rows is not None:
        if isinstance(n_rows, bool) or not isinstance(n_rows, numbers.Integral) or n_rows < 0:
            rep.errors.append(f"n_rows must be a whole number >= 0, got {shown(n_rows)}")
        elif n_rows == 0:
            rep.errors.append("the data has no rows")
        elif "rho" in valid:
            r = valid["rho"]
            rows_problem = check_rows_for_rho(n_rows, r)
            if rows_problem:
                rep.errors.append(rows_problem)
            elif min_rule_rows(n_rows, r) < FEW_ROWS_PER_RULE:
                rep.warnings.append(f"with rho={r} and {n_rows} rows a rule may hold only {min_rule_rows(n_rows, r)} "
                                    f"rows; its accuracy is then a rough estimate — raise rho or use more rows")
    if "tau" in valid and _is_number(valid["tau"]) and valid["tau"] < 0.5:
        rep.warnings.append(f"tau={valid['tau']} accepts rules whose rows mostly do not reach the target; the paper "
                            "uses 0.9 or 0.99")
    if "n_trees" in valid and valid["n_trees"] > MANY_TREES:
        rep.warnings.append(f"n_trees={valid['n_trees']} grows a large surrogate forest: fitting will be slow and "
                            "the rule set large")
    if "max_cells" in valid and valid["max_cells"] > MANY_CELLS:
        rep.warnings.append(f"max_cells={valid['max_cells']} allows a metarule grid that may need several GB of "
                            "memory")
    return rep
