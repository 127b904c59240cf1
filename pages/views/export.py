"""Export: rules and metarules as JSON, every row's explanation as CSV, and a self-contained HTML report."""

import streamlit as st

from tcrex.ui import auditing, downloads, exports  # [h16 hook] downloads
from tcrex.ui import state

st.title("Export")
ws, result = state.require_result()

st.caption("Files are built only when you click. The HTML report is self-contained: open it in any browser, offline.")
cols = st.columns(3)
with cols[0]:
    st.markdown("**Rules and metarules (JSON)**  \nThe fitted explanation as plain data; reload it with "
                "`TCREx.from_json`.")
    st.download_button("Download JSON", data=downloads.expiring(exports.rules_json(result), "application/json", "tcrex-rules.json"),  # [h16 hook]
                       file_name="tcrex-rules.json",
                       mime="application/json", icon=":material/data_object:", key="dl_json")
with cols[1]:
    st.markdown(f"**Explanations (CSV)**  \nOne row per individual ({ws.data.n_rows:,} rows): model output, "
                "target, rule, metarule, number of changes and the recourse text.")
    st.download_button("Download CSV", data=downloads.expiring(exports.explanations_csv(ws, result), "text/csv",  # [h16 hook]
                                               "tcrex-explanations.csv"), file_name="tcrex-explanations.csv",
                       mime="text/csv", icon=":material/table:", key="dl_csv")
with cols[2]:
    st.markdown("**Report (HTML)**  \nData and model fingerprints, parameters and constraints, date, rules, "
                "metarules, the figures of this dashboard and, once you have run one, the subgroup audit.")
    st.download_button("Download report", data=downloads.expiring(exports.html_report(ws, result), "text/html", "tcrex-report.html"),  # [h16 hook]
                       file_name="tcrex-report.html",
                       mime="text/html", icon=":material/description:", key="dl_html")

st.subheader("What the report records")
st.dataframe(exports.provenance_table(ws, result, auditing.last_audit(result)), hide_index=True, width="stretch")
