"""A self-contained HTML report of a fitted explainer for stakeholders (:func:`build_report`; what goes in:
:class:`ReportOptions`): one string that works offline, on a projector and on paper; ``_html`` builds it (see its
docstring and ``docs/figures.md``).
"""
from ._html import (AUDIT_COLUMNS, AUDIT_RULE_COLUMNS, GLOSSARY, ReportOptions, build_report, comparison_html,
                    fingerprint_bytes, fingerprint_frame, report_contents)

__all__ = ["build_report", "ReportOptions", "report_contents", "comparison_html", "fingerprint_bytes",
           "fingerprint_frame", "GLOSSARY", "AUDIT_COLUMNS", "AUDIT_RULE_COLUMNS"]
