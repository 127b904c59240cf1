"""A self-contained HTML report of a fitted explainer for stakeholders (:func:`build_report`; what goes in:
:class:`ReportOptions`): one string that works offline, on a projector and on paper. ``_html`` assembles it (see
its docstring and ``docs/figures.md``) from parts: ``_markup`` (escaping, tables, numbers for people),
``_recourse`` (headline, top rules, who gets recourse and how hard, the chosen people), ``_tables`` (rules,
metarules, glossary) and ``_groups`` (the subgroup audit and the comparison of two models).
"""
from ._groups import AUDIT_COLUMNS, AUDIT_RULE_COLUMNS, comparison_html
from ._html import ReportOptions, build_report, report_contents, report_summary
from ._markup import fingerprint_bytes, fingerprint_frame
from ._pdf import chromium, NO_CHROMIUM, pdf_bytes, PdfError, print_pdf
from ._summary import summary_sentence, verified_changes, VerifiedChange
from ._tables import GLOSSARY

__all__ = ["build_report", "ReportOptions", "report_contents", "comparison_html", "fingerprint_bytes",
           "fingerprint_frame", "GLOSSARY", "AUDIT_COLUMNS", "AUDIT_RULE_COLUMNS", "summary_sentence", "report_summary", "print_pdf", "pdf_bytes", "chromium", "PdfError",
           "NO_CHROMIUM", "verified_changes",
           "VerifiedChange"]
