"""Data & model: choose a sample or upload a table, review its columns, choose or train a model, then say which
outcome is favourable."""

import streamlit as st

from tcrex.ui.state import sources
from tcrex.ui.pages import data_model

st.title("Data & model")
st.caption("Samples apply at once. Uploads are parsed in memory and never executed; the engine always uses every "
           "row (tables show a sample of large files).")

sources.warm_model_sandbox()  # the model sandbox gets ready while a file is chosen
st.header("1 · Data", divider="gray")
data_model.data_section()

st.header("2 · Model", divider="gray")
data_model.model_section()
data_model.model_panel()

st.header("3 · Favourable outcome", divider="gray", anchor="favourable-outcome")
data_model.outcome_section()

st.header("4 · Value labels", divider="gray", anchor="value-labels")
data_model.value_labels_section()

st.header("5 · Data dictionary", divider="gray", anchor="data-dictionary")
data_model.dictionary_section()

st.header("6 · Columns in use", divider="gray")
data_model.label_section()
data_model.active_data_summary()

st.header("7 · Actionability constraints", divider="gray", anchor="actionability-constraints")
data_model.constraints_section()
