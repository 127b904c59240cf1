"""Home page: what T-CREx does, and the active data and model at a glance."""

import plotly.express as px
import streamlit as st

from tcrex.ui import state

data = state.active_data()
model = state.active_model()
accuracy = state.model_accuracy(data, model)

st.title("T-CREx — counterfactual rules and metarules")
st.markdown(
    """
T-CREx explains a classifier's decisions with **counterfactual rules**: for a
group of inputs that receive one outcome, a short rule says what would have to
be true for them to receive another one (for example *"if `debt_to_income`
≤ 0.35 and `n_late_payments` ≤ 1, the loan is approved"*).
**Metarules** then say *which* counterfactual rule applies to which region of
the input space, so a single compact rule set covers the whole data set instead
of one explanation per row.
"""
)

st.subheader(data.label)
st.caption(data.description)
col_rows, col_cols, col_acc = st.columns(3)
col_rows.metric("Rows", f"{data.n_rows:,}")
col_cols.metric("Columns", data.n_columns)
col_acc.metric(
    "Model accuracy on this data",
    "n/a" if accuracy is None else f"{accuracy:.1%}",
    help=f"{model.label}: {model.description}",
)
st.dataframe(data.frame, hide_index=True, height=320)

numeric = [c for c in data.features if c not in data.categorical]
feature = st.selectbox(
    "Feature to plot",
    data.features,
    index=data.features.index("income") if "income" in data.features else 0,
)
plot_frame = data.frame.assign(
    **{data.target: data.frame[data.target].map({1: "approved", 0: "rejected"}).fillna("other")}
)
figure = px.histogram(
    plot_frame,
    x=feature,
    color=data.target,
    barmode="overlay",
    nbins=40 if feature in numeric else None,
    opacity=0.75,
    color_discrete_map={"approved": "#2e9e63", "rejected": "#e4793f", "other": "#8a8f98"},
    category_orders={data.target: ["approved", "rejected", "other"]},
    title=f"Distribution of {feature} by outcome",
)
figure.update_layout(height=380, margin=dict(l=10, r=10, t=50, b=10))
st.plotly_chart(figure, width="stretch")
