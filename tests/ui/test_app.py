"""The dashboard runs headless in Streamlit's AppTest (no server, no browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app.py"


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    return at


def test_app_runs_without_exception(app):
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]


def test_home_page_content(app):
    assert [t.value for t in app.title] == ["T-CREx — counterfactual rules and metarules"]
    assert len(app.dataframe) == 1
    table = app.dataframe[0].value
    assert table.shape == (4000, 10)
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Rows"] == "4,000"
    assert metrics["Columns"] == "10"
    accuracy = float(metrics["Model accuracy on this data"].rstrip("%")) / 100
    assert accuracy > 0.8
    assert len(app.get("plotly_chart")) == 1


def test_sidebar_shows_active_data_and_model(app):
    captions = " ".join(c.value for c in app.sidebar.caption)
    assert "Loans sample" in captions and "4,000 rows" in captions
    assert "XGBoost" in captions


def test_choosing_another_feature_redraws(app):
    app.selectbox[0].select("purpose").run()
    assert not app.exception
    assert len(app.get("plotly_chart")) == 1
    app.selectbox[0].select("n_late_payments").run()
    assert not app.exception
