"""``tcrex report``: the stakeholder report the dashboard's Export page writes, from files, for a nightly job.

Every row of ``--data`` is explained and its counterfactual verified on ``--model`` (searching beyond the rules
from ``--reference-rows``, the rows the rules were fitted on, as the dashboard does from its fit rows); with
``--audit-by`` the subgroup audit, with ``--model-b`` the comparison; then :func:`tcrex.report.build_report` with
the same inputs the Export page passes, so the sections, the numbers and the first sentence are the same. The
sentence (:func:`tcrex.report.summary_sentence`) is also printed on stdout. ``--pdf`` prints the HTML with
Chromium (headless ``--print-to-pdf``).
"""
from __future__ import annotations

import os
import time

import click

from ._common import (_class_names_option, _data_option, _Fail, _guard, _labelled_rules, main, _model, _read_all,
                      _say, _value_labels_option)

#: Resamples of the audit's and the comparison's bootstrap: the dashboard's (tcrex/ui/pages/audit.py N_BOOT).
N_BOOT = 1000


def print_pdf(html_path: str, pdf_path: str) -> None:
    """:func:`tcrex.report.print_pdf`, its refusals said as the command line's."""
    from ..report import PdfError, print_pdf as _print

    try:
        _print(html_path, pdf_path)
    except PdfError as exc:
        raise _Fail(str(exc)) from None


def report_inputs(ex, X, model, reference, *, groups=None, audit_title=None, model_b=None, model_b_label=None):
    """What :func:`tcrex.report.build_report` gets, besides provenance, for ``ex`` on ``X`` checked on ``model``:
    the explanations, the verified frame, its effectiveness, change/keep per feature, the audit by ``groups`` and
    the comparison with ``model_b`` -- the Export page's inputs (``tcrex.ui.pages.export.build_html``)."""
    explanations = ex.explain(X, model=model)
    cf = ex.counterfactuals(X, model=model, reference=reference)
    kw = dict(explanations=explanations, counterfactuals=cf, people=X,
              effectiveness=ex.effectiveness(explanations=explanations, counterfactuals=cf),
              actions=ex.feature_actions(X, model=model))
    if groups is not None:
        from ..audit import audit

        kw["audit"] = audit(ex, X, groups, model=model, n_boot=N_BOOT, random_state=0, counterfactuals=cf,
                            reference_rows=reference)
        kw["audit_title"] = audit_title
    if model_b is not None:
        from ..compare import compare_models

        kw["comparison"] = compare_models(ex, X, model_b, model_a=model, groups=groups, n_boot=N_BOOT,
                                          random_state=0, reference_rows=reference)
        kw["comparison_title"] = f"model A vs {model_b_label}"
    return kw


def _read_bytes(path: str) -> bytes:
    import fsspec

    with fsspec.open(path, "rb") as fh:
        return fh.read()


@main.command("report")
@click.option("--rules", "rules_path", required=True, help="Rules JSON written by `tcrex fit` (or the Export page).")
@click.option("--model", "model_path", required=True,
              help="Model file (XGBoost JSON/UBJ, LightGBM .txt, CatBoost .cbm/JSON, skops, ONNX), loaded safely.")
@_data_option
@click.option("--reference-rows", "reference_rows", required=True,
              help="Parquet/CSV file(s) of the rows the rules were fitted on: the search beyond the rules starts "
                   "from them, as the dashboard's from its fit rows.")
@click.option("--audit-by", "audit_by", help="Column of --data grouping the people for the subgroup audit.")
@click.option("--model-b", "model_b_path", help="A second model file: the report compares recourse under both.")
@click.option("--title", help="The report's title (default: 'T-CREx report — <data file name>').")
@click.option("--out", required=True, help="Where to write the report (HTML).")
@click.option("--pdf", "pdf_path", help="Also print it to this PDF file with headless Chromium.")
@_value_labels_option
@_class_names_option
@_guard
def report_command(rules_path, model_path, data, reference_rows, audit_by, model_b_path, title, out, pdf_path,
                   value_labels_path=None, class_names_text=None):
    """Write the stakeholder report of the rules on DATA checked on the model (the Export page's report), and print
    its first sentence."""
    import fsspec

    from ..distributed import load_rules
    from ..outputs import atomic_output
    from ..report import ReportOptions, build_report, fingerprint_bytes, fingerprint_frame, report_summary

    t0 = time.perf_counter()
    from ..report import chromium, NO_CHROMIUM

    if pdf_path and chromium() is None:  # said before any work
        raise _Fail(NO_CHROMIUM)
    with fsspec.open(rules_path, "r") as fh:
        rules = _labelled_rules(fh.read(), value_labels_path, class_names_text)
    ex = load_rules(rules)
    names = list(ex.schema_.names)
    frame = _read_all(data)
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise _Fail(f"{data}: lacks column(s) {', '.join(map(str, missing))} that the rules name")
    if audit_by and audit_by not in frame.columns:
        raise _Fail(f"--audit-by {audit_by!r} is not a column of {data}")
    reference = _read_all(reference_rows)
    missing = [c for c in names if c not in reference.columns]
    if missing:
        raise _Fail(f"{reference_rows}: lacks column(s) {', '.join(map(str, missing))} that the rules name")
    X, reference = frame[names], reference[names]
    model = _model(model_path)
    model_b = _model(model_b_path) if model_b_path else None
    groups = frame[audit_by].astype(str) if audit_by else None
    _say(f"explaining and verifying {len(X):,} rows on the model")
    inputs = report_inputs(ex, X, model, reference, groups=groups, audit_title=f"by {audit_by}" if audit_by else None,
                           model_b=model_b, model_b_label=os.path.basename(model_b_path or ""))
    name = os.path.basename(str(data).rstrip("/"))
    options = ReportOptions(
        title=title or f"T-CREx report — {name}",
        data_description=f"{name}: {len(X):,} rows, {len(names)} features", data_fingerprint=fingerprint_frame(X),
        model_description=os.path.basename(model_path), model_fingerprint=fingerprint_bytes(_read_bytes(model_path)),
        params={"tau": ex.tau, "rho": ex.rho, "surrogate trees": ex.n_trees, "grid cell limit": ex.max_cells,
                "rules": rules_path, "reference rows": f"{reference_rows} ({len(reference):,} rows)"},
        model_performance="No label column was given, so the model's accuracy is not measured here.", **inputs)
    html = build_report(ex, options)
    with atomic_output(out, "w", encoding="utf-8") as fh:
        fh.write(html)
    click.echo(report_summary(ex, options))
    _say(f"wrote the report to {out} in {time.perf_counter() - t0:.1f}s")
    if pdf_path:
        print_pdf(out, pdf_path)
        _say(f"printed it to {pdf_path}")
