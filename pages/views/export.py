"""Export: rules and metarules as JSON, every row's explanation as CSV, and a self-contained HTML report."""

import streamlit as st

from tcrex.ui import auditing, downloads, exports, page

st.title("Export")
ws, result = page.require_result()

st.caption("Files are built only when you click. The HTML report is self-contained: open it in any browser, offline.")
cols = st.columns(3)
with cols[0]:
    st.markdown("**Rules and metarules (JSON)**  \nThe fitted explanation as plain data; reload it with "
                "`TCREx.from_json`.")
    st.download_button("Download JSON", data=downloads.expiring(exports.rules_json(result), "application/json", "tcrex-rules.json"),
                       file_name="tcrex-rules.json",
                       mime="application/json", icon=":material/data_object:", key="dl_json")
with cols[1]:
    st.markdown(f"**Explanations (CSV)**  \nOne row per individual ({ws.data.n_rows:,} rows): model output, "
                "target, rule, metarule, number of changes and the recourse text.")
    st.download_button("Download CSV", data=downloads.expiring(exports.explanations_csv(ws, result), "text/csv",
                                               "tcrex-explanations.csv"), file_name="tcrex-explanations.csv",
                       mime="text/csv", icon=":material/table:", key="dl_csv")
with cols[2]:
    st.markdown("**Report (HTML)**  \nFor stakeholders: an executive summary, the individual chosen on the "
                "Individual page, the metarule trees, rules, aggregates, fingerprints and, once you have run one, "
                "the subgroup audit. No row-level data unless you tick it.")
    opts = exports.report_options()
    st.download_button("Download report", data=downloads.expiring(exports.html_report(ws, result, **opts), "text/html",
                                                                "tcrex-report.html"),
                       file_name="tcrex-report.html",
                       mime="text/html", icon=":material/description:", key="dl_html")

st.subheader("What the report records")
st.dataframe(exports.provenance_table(ws, result, auditing.last_audit(result)), hide_index=True, width="stretch")
