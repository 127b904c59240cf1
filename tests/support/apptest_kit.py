"""What the AppTest suites share: starting the app, moving between pages, uploading, applying parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from tcrex import datasets
from tcrex.ui.state import session

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
PAGES = ["home", "data_model", "global_rules", "rule_plot", "change_keep", "individual", "audit", "export", "compare",
         "monitor"]


def new_app() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    return at


def goto(at: AppTest, page: str) -> AppTest:
    return at.switch_page(f"pages/views/{page}.py").run()


def show_row(at: AppTest, row: int) -> AppTest:
    """On the Individual page: choose the person by row number (the "By row" mode) and show row ``row``."""
    at.segmented_control(key="ind_mode").set_value("row").run()
    return at.number_input(key=next(n.key for n in at.number_input if n.key.startswith("ind_row_"))).set_value(row) \
        .run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def charts(at: AppTest) -> int:
    return len(at.get("plotly_chart")) + len(at.get("graphviz_chart"))


def sidebar_text(at: AppTest) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def last_result(at: AppTest):
    return session.current_fit(at.session_state)


def check_of(result):
    """The server's background check of a fit result (:data:`tcrex.ui.state.checks.REGISTRY`), or None."""
    from tcrex.ui.state import checks

    found = [c for c in checks.REGISTRY.checks() if c.key[0] == result.key]
    return found[-1] if found else None


def apply_params(at: AppTest, **values) -> AppTest:
    keys = {"tau": session.PARAM_TAU, "rho": session.PARAM_RHO, "trees": session.PARAM_TREES, "max_cells": session.PARAM_MAX_CELLS,
            "target": session.TARGET_WIDGETS, "threshold": session.TARGET_THRESHOLD, "grower": session.PARAM_GROWER}
    for name, value in values.items():
        key = target_key(at) if name == "target" else keys[name]
        widget = next(w for w in at.sidebar.get(_widget_type(at, key)) if w.key == key)
        widget.set_value(value)
    at.sidebar.button[0].click()
    return at.run()


def target_key(at: AppTest) -> str:
    """The key of the sidebar's favourable-outcome selectbox (it carries the workspace and the class names, so
    other data gets a new widget)."""
    return next(w.key for w in at.sidebar.selectbox if str(w.key).startswith(session.TARGET_SELECT))


def target_box(at: AppTest):
    return next(w for w in at.sidebar.selectbox if str(w.key).startswith(session.TARGET_SELECT))


def confirm_outcome(at: AppTest) -> AppTest:
    """Press "Use this outcome" on the Data & model page's favourable-outcome question."""
    next(b for b in at.button if b.label == "Use this outcome").click()
    return at.run()


def _widget_type(at: AppTest, key: str) -> str:
    for kind in ("slider", "number_input", "selectbox", "radio"):
        if any(w.key == key for w in at.sidebar.get(kind)):
            return kind
    raise KeyError(key)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def choose_upload(at: AppTest) -> AppTest:
    goto(at, "data_model")
    at.radio(key=session.SETUP_DATA_CHOICE).set_value("upload").run()
    return at


def upload_data(at: AppTest, name: str, data: bytes) -> AppTest:
    choose_upload(at)
    at.get("file_uploader")[0].set_value((name, data, "text/csv")).run()
    return at


def use_this_data(at: AppTest) -> AppTest:
    button = next(b for b in at.button if b.label == "Use this data")
    button.click()
    return at.run()


def upload_bundled_model(at: AppTest) -> AppTest:
    """On the Data & model page: choose "upload a model" and upload the bundled loans XGBoost model file."""
    from tcrex import datasets

    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("upload").run()
    model_bytes = (datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL).read_bytes()
    at.get("file_uploader")[-1].set_value(("loans_model.json", model_bytes, "application/json")).run()
    return at


def loans_with_uploaded_model(rows: int = 800) -> AppTest:
    """A new app on the first ``rows`` bundled loans uploaded as a CSV, with the bundled model uploaded as a file."""
    from tcrex import datasets

    at = new_app()
    upload_data(at, "loans.csv", csv_bytes(datasets.load_bundled_loans().head(rows)))
    use_this_data(at)
    return upload_bundled_model(at)


def loans_with_income_gaps(every: int) -> bytes:
    """The loans sample (400 rows) as CSV with every ``every``-th income missing."""
    from tcrex import datasets

    frame = datasets.make_loans(400, random_state=1).astype({"income": float})
    frame.loc[::every, "income"] = float("nan")
    return csv_bytes(frame)


def outputs_from_a_column(rows: int = 1000) -> AppTest:
    """A new app on the first ``rows`` loans with the bundled model's outputs in a column ``model_says``, chosen
    as the model's outputs ("Use a column of model outputs"): no model the points could be checked on."""
    from tcrex import datasets

    at = new_app()
    frame = datasets.load_bundled_loans().head(rows)
    frame["model_says"] = datasets.load_bundled_model().predict(frame)
    upload_data(at, "scored.csv", csv_bytes(frame))
    use_this_data(at)
    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("column").run()
    at.selectbox(key="setup_output_column").set_value("model_says").run()
    next(b for b in at.button if b.label == "Use this column").click()
    return at.run()


def wide_frame(n_features: int = 14, n: int = 400) -> pd.DataFrame:
    """A table with many features (``f00`` … and ``age``, ``region``) and an ``approved`` outcome."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({f"f{i:02d}": rng.normal(size=n).round(3) for i in range(n_features)})
    frame["age"] = rng.integers(18, 80, n)
    frame["region"] = rng.choice(["north", "south", "west"], n)
    frame["approved"] = ((frame.f00 + frame.f01 > 0) | (frame.age > 60)).astype(int)
    return frame


def planted_groups_app() -> AppTest:
    """The planted-disparity data (group B needs more changes; ``datasets.make_recourse_groups``) uploaded with
    ``group`` kept as "not a feature (audit only)" (what the column table produces) and an XGBoost model to train;
    not yet run (the caller goes to a page)."""
    from tcrex.ui.state.sources import DataSpec, ModelSpec

    at = new_app()
    frame = datasets.make_recourse_groups(1600, disparity=True, random_state=0)
    upload_data(at, "groups.csv", csv_bytes(frame))
    digest = session.uploads(at.session_state, create=False)["data"][0]
    session.set_data_spec(DataSpec("upload", "groups.csv", digest, "approved", (), None, "drop", ("group",)),
                          at.session_state)
    session.set_model_spec(ModelSpec("train", "xgboost"), at.session_state)
    return at
