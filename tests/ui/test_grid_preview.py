"""The parameter form previews the metarule grid before Apply: its size (the one the fit then builds), its
expected time, and, over the cell limit, the refusal the fit would give with what to change."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from tests.support.apptest_kit import apply_params, assert_clean, last_result, new_app

from tcrex.ui.state import session


def _set(at: AppTest, **values) -> AppTest:
    keys = {"tau": session.PARAM_TAU, "rho": session.PARAM_RHO, "trees": session.PARAM_TREES,
            "max_cells": session.PARAM_MAX_CELLS}
    for name, value in values.items():
        next(w for w in at.sidebar.get("slider") + at.sidebar.get("number_input") if w.key == keys[name]).set_value(value)
    return at.run()


def _preview(at: AppTest) -> str:
    texts = [m.value for kind in ("caption", "warning", "error", "info") for m in at.sidebar.get(kind)]
    return " ".join(t for t in texts if "Grid preview" in t)


def _cells(text: str) -> int:
    return int(re.search(r"([\d,]+) grid cells?", text).group(1).replace(",", ""))


def test_preview_counts_the_grid_the_fit_then_builds():
    at = new_app()
    assert not _preview(at)  # nothing pending, nothing previewed
    _set(at, tau=0.8, trees=2)
    preview = _preview(at)
    assert "Grid preview" in preview and re.search(r"about [\d.]+ s", preview), preview
    cells = _cells(preview)
    apply_params(at, tau=0.8, trees=2)
    assert_clean(at)
    assert last_result(at).n_cells == cells
    assert not _preview(at)  # applied: nothing pending


def test_preview_over_the_cell_limit_says_the_fit_would_be_refused_and_what_to_change():
    at = new_app()
    _set(at, rho=0.005, trees=20, max_cells=1000)
    preview = " ".join(e.value for e in at.sidebar.error if "Grid preview" in e.value)
    assert "Apply would be refused" in preview and "above max_cells=1,000" in preview
    assert "Raise rho" in preview and "fewer surrogate trees" in preview
    cells = _cells(preview)
    apply_params(at, rho=0.005, trees=20, max_cells=1000)
    assert f"{cells:,} cells" in at.error[0].value  # the fit's own refusal names the same grid
