"""Compare models: explainer B takes its own ρ, τ, surrogate trees and cell limit (starting from A's), and when
B's explainer cannot be fitted the page says which limit was hit and what to change, leaving A untouched."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.apptest_kit import assert_clean, goto, new_app

from tcrex.ui.state import session


@pytest.fixture(scope="module")
def compared() -> AppTest:
    at = new_app()
    goto(at, "compare")
    return at


def _b_widget(at: AppTest, name: str):
    prefix = f"compare_b_{name}_"
    return next(w for w in at.get("slider") + at.get("number_input") if str(w.key).startswith(prefix))


def _set_b(at: AppTest, **values) -> AppTest:
    for name, value in values.items():
        _b_widget(at, name).set_value(value)
    return at.run()


def test_explainer_b_starts_with_a_parameters(compared):
    at = compared
    assert_clean(at)
    a = session.current_fit(at.session_state).params
    assert (_b_widget(at, "tau").value, _b_widget(at, "rho").value) == (a.tau, a.rho)
    assert (_b_widget(at, "trees").value, _b_widget(at, "cells").value) == (a.n_trees, a.max_cells)
    run = session.last_comparison(at.session_state)
    assert run.params_b == {}
    b = run.result.explainer_b
    assert (b.rho, b.tau, b.n_trees, b.max_cells) == (a.rho, a.tau, a.n_trees, a.max_cells)
    assert any("explainer B has model A's parameters" in c.value for c in at.caption)


def test_explainer_b_over_its_cell_limit_says_why_and_then_uses_its_own_parameters(compared):
    at = compared
    a_fit = session.current_fit(at.session_state)
    _set_b(at, rho=0.005, trees=20, cells=1000)
    assert not at.exception
    text = " ".join(w.value for w in at.warning)
    assert "could not fit explainer B" in text and "above max_cells=1,000" in text
    assert "Explainer B's parameters" in text and "ρ (B)" in text and "Grid cell limit (B)" in text
    assert session.current_fit(at.session_state).key == a_fit.key  # A's explainer is untouched
    _set_b(at, rho=0.05, trees=1, cells=100_000)
    assert_clean(at)
    run = session.last_comparison(at.session_state)
    assert run.params_b == {"rho": 0.05}
    b = run.result.explainer_b
    assert (b.rho, b.n_trees, b.tau) == (0.05, 1, a_fit.params.tau)
    assert a_fit.explainer.rho != 0.05
    assert any("its own parameters (ρ = 0.050; the rest A's)" in c.value for c in at.caption)
