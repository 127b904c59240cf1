"""Export: rules and metarules as JSON, every row's explanation as CSV, and a self-contained HTML report."""

import streamlit as st

from tcrex.ui.widgets import downloads, page
from tcrex.ui.pages import compare, export

st.title("Export")
ws, result = page.require_result()

sections = export.report_sections(ws, result)  # the audit and comparison of the saved settings, if not run here
st.caption("Files are built only when you click. The HTML report is self-contained: open it in any browser, offline.")
cols = st.columns(3)
with cols[0]:
    st.markdown("**Rules and metarules (JSON)**  \nThe fitted explanation as plain data; reload it with "
                "`TCREx.from_json`.")
    downloads.button("Download JSON", export.rules_json(result, ws.class_names, export.export_dictionary(ws)), file_name="tcrex-rules.json",
                     mime="application/json", icon=":material/data_object:", key="dl_json")
with cols[1]:
    st.markdown(f"**Explanations (CSV)**  \nOne row per individual ({ws.data.n_rows:,} rows): model output, "
                "target, rule, metarule, number of changes and the recourse text.")
    downloads.button("Download CSV", export.explanations_csv(ws, result), file_name="tcrex-explanations.csv",
                     mime="text/csv", icon=":material/table:", key="dl_csv")
with cols[2]:
    st.markdown("**Report (HTML)**  \nFor stakeholders: an executive summary and one short section per question, "
                "then an appendix with the rules, metarule trees, intervals and fingerprints. No one's values "
                "unless you tick them.")
    opts = export.report_options()
    st.markdown("**What will be in the file:**\n\n" + "\n".join(
        f"- {item}" for item in export.report_contents(ws, result, **opts, sections=sections)))
    downloads.button("Download report", export.html_report(ws, result, **opts, sections=sections), file_name="tcrex-report.html",
                     mime="text/html", icon=":material/description:", key="dl_html")
    if export.pdf_available():
        downloads.button("Download report (PDF)", export.pdf_report(ws, result, **opts, sections=sections),
                         file_name="tcrex-report.pdf", mime="application/pdf", icon=":material/picture_as_pdf:",
                         key="dl_pdf")
    else:
        st.caption("PDF: this server has no Chromium to print with; open the HTML report and print it.")

comparison = sections.comparison
if comparison is not None:
    st.markdown(f"**Comparison with another model**  \n{comparison.title}: the comparison as JSON, and one row per "
                "person (change, verified under each model, whether A's advice holds under B) as CSV.")
    c1, c2 = st.columns(2)
    with c1:
        downloads.button("Download comparison (JSON)", compare.comparison_json(comparison),
                         file_name="tcrex-comparison.json", mime="application/json", icon=":material/data_object:",
                         key="dl_compare_json")
    with c2:
        downloads.button("Download comparison people (CSV)", compare.people_csv(comparison),
                         file_name="tcrex-comparison-people.csv", mime="text/csv", icon=":material/table:",
                         key="dl_compare_csv")

st.subheader("What the report records")
st.dataframe(export.provenance_table(ws, result, sections.audit), hide_index=True, width="stretch")
