"""validate_params: every problem at once, in the engine's words where it has them."""
import math
import re

import pytest

from tcrex import TCREx
from tcrex.errors import ParameterError
from tcrex.intake import validate_params


def _engine_message(**params):
    with pytest.raises(ParameterError) as ei:
        TCREx(**params)._check_params()
    return str(ei.value)


def test_valid_parameters():
    rep = validate_params(0.02, 0.9, 1, 100_000, 1000)
    assert rep.ok and rep.errors == [] and rep.warnings == []
    rep.raise_if_invalid()


def test_all_errors_at_once_with_engine_messages():
    rep = validate_params(0, 1.5, 0, -3, 100)
    assert not rep.ok and len(rep.errors) == 4
    assert rep.errors[0] == _engine_message(rho=0)
    assert rep.errors[1] == _engine_message(tau=1.5)
    assert rep.errors[2] == _engine_message(n_trees=0)
    assert rep.errors[3] == _engine_message(max_cells=-3)
    with pytest.raises(ParameterError, match="rho must be a fraction.*tau must be a fraction"):
        rep.raise_if_invalid()


@pytest.mark.parametrize("kwargs,pattern", [
    ({"rho": True}, "rho must be a fraction in \\(0, 1\\], got True \\(a yes/no value\\)"),
    ({"n_trees": True}, "n_trees must be a whole number >= 1, got True"),
    ({"rho": float("nan")}, "rho must be a fraction"),
    ({"tau": math.inf}, "tau must be a fraction"),
    ({"rho": "0.1"}, "rho must be a fraction"),
    ({"n_trees": 2.5}, "n_trees must be a whole number"),
    ({"max_cells": None}, "max_cells must be a whole number"),
    ({"n_rows": 0}, "the data has no rows"),
    ({"n_rows": -5}, "n_rows must be a whole number"),
    ({"rho": 0.05, "n_rows": 10}, "rho=0.05 asks for rules holding at least 1 of 10 rows, which needs 20 rows; use "
                                  "more rows or raise rho to at least 0.1"),
])
def test_single_errors(kwargs, pattern):
    args = {"rho": 0.02, "tau": 0.9, "n_trees": 1, "max_cells": 1000, "n_rows": 1000, **kwargs}
    rep = validate_params(**args)
    assert len(rep.errors) == 1, rep.errors
    assert re.search(pattern, rep.errors[0]), rep.errors[0]


def test_rho_row_check_matches_the_engine():
    import numpy as np

    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ParameterError) as ei:
        TCREx(rho=0.05).fit(X, y_pred=(X[:, 0] > 0).astype(int))
    assert validate_params(0.05, 0.9, 1, 1000, 10).errors == [str(ei.value)]


def test_warnings():
    rep = validate_params(0.05, 0.3, 500, 2 * 10**7, 60)  # large but under the hard caps: warnings, not errors
    assert rep.ok
    assert [w.split(" ")[0] for w in rep.warnings] == ["with", "tau=0.3", "n_trees=500", "max_cells=20000000"]
    assert rep.messages == rep.warnings


# hostile numbers: every parameter path guards overflow — a float cannot hold 1 / 5e-324 or 10**400,
# and validate_params must answer with a message, never raise
HUGE = 10**400


@pytest.mark.parametrize("kwargs,pattern", [
    ({"rho": 5e-324}, r"rho=5e-324 asks for rules holding at least 1 of 1,000 rows, which needs about 10\^323 rows; "
                      r"use more rows or raise rho to at least 0.001"),
    ({"rho": 1e-300}, r"which needs about 10\^299 rows"),
    ({"rho": 2.5e-16}, r"which needs about 10\^15 rows"),
    ({"rho": 1e-14}, r"which needs 100,000,000,000,000 rows"),
    ({"n_trees": HUGE}, r"n_trees = a 401-digit number is above the limit of 1,000"),
    ({"max_cells": HUGE}, r"max_cells = a 401-digit number is above the limit of 50,000,000"),
    ({"rho": HUGE}, r"rho must be a fraction in \(0, 1\], got a 401-digit number"),
    ({"tau": -HUGE}, r"tau must be a fraction in \(0, 1\], got a 401-digit number"),
    ({"n_rows": -HUGE}, r"n_rows must be a whole number >= 0, got a 401-digit number"),
    ({"n_trees": 1e308 * 10}, r"n_trees must be a whole number >= 1, got inf"),
])
def test_overflowing_numbers_are_messages(kwargs, pattern):
    args = {"rho": 0.02, "tau": 0.9, "n_trees": 1, "max_cells": 1000, "n_rows": 1000, **kwargs}
    rep = validate_params(**args)
    assert len(rep.errors) == 1, rep.errors
    assert re.search(pattern, rep.errors[0]), rep.errors[0]
    assert len(rep.errors[0]) < 300


def test_overflowing_numbers_in_numpy_types_and_huge_row_counts():
    import numpy as np

    assert validate_params(np.float64(5e-324), 0.9, n_rows=1000).errors[0].startswith("rho=5e-324 asks for")
    assert "about 10^44 rows" in validate_params(np.float32(1e-45), 0.9, n_rows=1000).errors[0]
    # 10**400 rows are enough for any rho a float holds; the minimum rule size is counted exactly, not as inf
    rep = validate_params(5e-324, 0.9, n_rows=HUGE)
    assert rep.ok, rep.errors
    from tcrex import min_rule_rows
    assert min_rule_rows(HUGE, 0.5) == HUGE // 2 and min_rule_rows(10, 0.1) == 1


def test_the_engine_refuses_a_tiny_rho_with_the_same_message():
    import numpy as np

    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(ParameterError) as ei:
        TCREx(rho=5e-324).fit(X, y_pred=(X[:, 0] > 0).astype(int))
    assert validate_params(5e-324, 0.9, 1, 1000, 50).errors == [str(ei.value)]
