"""Dashboard glue: what data and model are active, loaded once and cached.

Page scripts in ``pages/`` stay thin: they ask this module for the active data
(:func:`active_data`) and the active model (:func:`active_model`) and only
draw.  Loading goes through Streamlit's caches, so it happens once per server
process, not on every rerun:

* :func:`load_bundled_data` -- ``st.cache_data`` (each caller gets its own
  copy of the frame, so a page may modify it freely);
* :func:`load_bundled_model` -- ``st.cache_resource`` (one shared model
  object; treat it as read-only).

For now the only data set is the bundled ``sample_data/loans.csv`` and the only
model the bundled XGBoost classifier; the dashboard issue will add uploads and
the other samples.  The choice is kept in ``st.session_state`` under
:data:`DATA_KEY` and :data:`MODEL_KEY` so that later pages can switch it.

This is the only part of ``tcrex`` that imports streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import datasets

#: ``st.session_state`` key naming the active data set.
DATA_KEY = "tcrex.active_data"
#: ``st.session_state`` key naming the active model.
MODEL_KEY = "tcrex.active_model"

BUNDLED_DATA = "bundled-loans"
BUNDLED_MODEL = "bundled-xgboost"


@dataclass(frozen=True)
class ActiveData:
    """The data set the dashboard works on."""

    key: str
    label: str  # short human name, shown in the sidebar
    description: str
    frame: pd.DataFrame  # features and target
    target: str
    categorical: tuple[str, ...]

    @property
    def features(self) -> list[str]:
        return [c for c in self.frame.columns if c != self.target]

    @property
    def n_rows(self) -> int:
        return int(self.frame.shape[0])

    @property
    def n_columns(self) -> int:
        return int(self.frame.shape[1])


@dataclass(frozen=True)
class ActiveModel:
    """The model whose decisions the dashboard explains."""

    key: str
    label: str
    description: str
    model: Any  # has predict(DataFrame) -> array


@st.cache_data(show_spinner="Loading the bundled loans data ...")
def load_bundled_data() -> pd.DataFrame:
    """``sample_data/loans.csv`` with the documented dtypes (cached copy)."""
    return datasets.load_bundled_loans()


@st.cache_resource(show_spinner="Loading the bundled model ...")
def load_bundled_model() -> datasets.BundledModel:
    """The bundled XGBoost classifier (one shared instance)."""
    return datasets.load_bundled_model()


@st.cache_data(show_spinner=False)
def bundled_model_accuracy() -> float:
    """Accuracy of the bundled model on the bundled data."""
    frame = load_bundled_data()
    model = load_bundled_model()
    return model.score(frame, frame[datasets.LOANS_TARGET])


def active_data() -> ActiveData:
    """The active data set (currently always the bundled loans sample)."""
    st.session_state.setdefault(DATA_KEY, BUNDLED_DATA)
    frame = load_bundled_data()
    return ActiveData(
        key=BUNDLED_DATA,
        label="Loans sample",
        description=datasets.SAMPLES["loans"].description,
        frame=frame,
        target=datasets.LOANS_TARGET,
        categorical=tuple(datasets.LOANS_CATEGORICAL),
    )


def active_model() -> ActiveModel:
    """The active model (currently always the bundled XGBoost classifier)."""
    st.session_state.setdefault(MODEL_KEY, BUNDLED_MODEL)
    model = load_bundled_model()
    params = model.meta.get("params", {})
    return ActiveModel(
        key=BUNDLED_MODEL,
        label="Bundled XGBoost classifier",
        description=(
            f"{params.get('n_estimators', '?')} trees, at most "
            f"{params.get('max_leaves', '?')} leaves each, trained on the loans sample"
        ),
        model=model,
    )


def model_accuracy(data: ActiveData, model: ActiveModel) -> float | None:
    """Accuracy of ``model`` on ``data``; ``None`` if it cannot be computed."""
    if data.key == BUNDLED_DATA and model.key == BUNDLED_MODEL:
        return bundled_model_accuracy()
    try:
        predictions = np.asarray(model.model.predict(data.frame))
    except Exception:  # a model that does not fit the data: nothing to show
        return None
    return float(np.mean(predictions == data.frame[data.target].to_numpy()))


def render_sidebar_summary() -> None:
    """Show the active data and model in the sidebar (called by ``app.py``)."""
    data = active_data()
    model = active_model()
    with st.sidebar:
        st.markdown("**Active data**")
        st.caption(
            f"{data.label}: {data.n_rows:,} rows × {data.n_columns} columns, "
            f"target `{data.target}`"
        )
        st.markdown("**Active model**")
        st.caption(f"{model.label}: {model.description}")
