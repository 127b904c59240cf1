"""A self-contained HTML report of a fitted explainer: one string that works offline, on a projector and on paper.

plotly.js is embedded once (with the first figure); metarule trees are drawn as inline SVG by a pure-Python
layout (:func:`tcrex.figures.dot_to_svg`), with their DOT text alongside for any Graphviz viewer. Every string
that comes from the user (titles, descriptions, parameters, column names, category values) is HTML-escaped.
"""
from __future__ import annotations

import hashlib
import html
import json
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from ._params import check_fitted
from .figures import dot_to_svg, metarule_tree_dot

MAX_TABLE_ROWS = 500

_CSS = """
:root { --ink: #1a1a1a; --muted: #5a5a5a; --rule: #d0d0d0; --band: #f4f4f4; }
* { box-sizing: border-box; }
body { font-family: Arial, Helvetica, sans-serif; font-size: 18px; line-height: 1.45; color: var(--ink);
       max-width: 1280px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 34px; margin: 0 0 4px; }
h2 { font-size: 26px; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 2px solid var(--ink); }
h3 { font-size: 21px; margin: 28px 0 8px; }
.meta { color: var(--muted); margin: 0 0 20px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 15px; width: 100%; }
th, td { border: 1px solid var(--rule); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--band); }
tbody tr:nth-child(even) td { background: #fafafa; }
table.kv { width: auto; min-width: 50%; }
table.kv th { width: 14em; }
code, pre, .fp { font-family: "DejaVu Sans Mono", Consolas, monospace; }
.fp { font-size: 16px; background: var(--band); padding: 1px 6px; border-radius: 4px; }
pre { font-size: 14px; background: var(--band); padding: 12px 14px; border-radius: 6px; white-space: pre-wrap;
      word-break: break-word; }
pre.summary { font-size: 16px; }
.figure { margin: 12px 0 28px; page-break-inside: avoid; break-inside: avoid; }
.tree { overflow-x: auto; border: 1px solid var(--rule); border-radius: 6px; padding: 8px; background: #fff; }
.tree svg { display: block; margin: 0 auto; }  /* natural size: scroll sideways rather than shrink */
.note { color: var(--muted); font-size: 15px; }
nav ol { columns: 2; font-size: 16px; }
details summary { cursor: pointer; color: var(--muted); font-size: 15px; }
@media print {
  body { font-size: 12pt; max-width: none; padding: 0; }
  h2 { page-break-after: avoid; break-after: avoid; }
  table { font-size: 9.5pt; }
  .tree { overflow: visible; border: none; }
  .tree svg { max-width: 100%; height: auto; }
  details { display: none; }
  nav { display: none; }
}
"""


def fingerprint_bytes(data: bytes) -> str:
    """SHA-256 hex digest of raw bytes (e.g. an uploaded file)."""
    return hashlib.sha256(data).hexdigest()


def fingerprint_frame(df: pd.DataFrame) -> str:
    """SHA-256 hex digest of a DataFrame's column names, dtypes, index and values (row-hash based, exact)."""
    h = hashlib.sha256()
    h.update(json.dumps([[str(c), str(t)] for c, t in df.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
    return h.hexdigest()


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _fp(value: str | None) -> str:
    if not value:
        return '<span class="note">not given</span>'
    v = str(value)
    short = v[:16] + ("…" if len(v) > 16 else "")
    return f'<span class="fp" title="{_e(v)}">sha256:{_e(short)}</span> <span class="note">({_e(v)})</span>'


def _cell(v) -> str:
    if isinstance(v, (list, tuple, set)):
        return ", ".join(str(x) for x in v)
    if isinstance(v, (float, np.floating)):
        return "" if np.isnan(v) else f"{float(v):.4g}"
    if v is None or v is pd.NA:
        return ""
    return str(v)


def _table(df: pd.DataFrame, max_rows: int = MAX_TABLE_ROWS) -> str:
    n = len(df)
    shown = df.iloc[:max_rows]
    head = "".join(f"<th>{_e(c)}</th>" for c in shown.columns)
    body = []
    for row in shown.itertuples(index=False):
        body.append("<tr>" + "".join(f"<td>{_e(_cell(v))}</td>" for v in row) + "</tr>")
    note = f'<p class="note">First {max_rows} of {n} rows.</p>' if n > max_rows else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{note}"


def _kv(items, raw: dict | None = None) -> str:
    """A two-column key/value table; ``raw`` maps keys to ready-made (already escaped) HTML cells."""
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(_cell(v))}</td></tr>" for k, v in items)
    rows += "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in (raw or {}).items())
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


def _slug(prefix: str, i: int) -> str:
    return f"{prefix}-{i}"


AUDIT_COLUMNS = {"group": "group", "n_total": "rows", "n": "need recourse", "n_recourse": "have recourse",
                 "recourse_share": "share with recourse", "n_no_rule": "no valid rule",
                 "n_no_actionable_rule": "no actionable rule", "mean_changes": "mean changes",
                 "mean_distance": "mean distance", "mean_feasibility": "mean feasibility",
                 "mean_accuracy": "mean accuracy", "small_group": "small group", "is_reference": "reference"}


def _audit_html(result, title: str | None, include_plotlyjs: bool) -> str:
    """Findings, per-group table and gap forest plot of a subgroup audit."""
    from .figures import gap_forest_plot

    head = f'<p class="meta">{_e(title)}</p>' if title else ""
    items = "".join(f"<li>{_e(s)}</li>" for s in result.findings())
    table = result.table()
    table = table[[c for c in AUDIT_COLUMNS if c in table.columns]].rename(columns=AUDIT_COLUMNS)
    fig = gap_forest_plot(result)
    div = fig.to_html(full_html=False, include_plotlyjs=True if include_plotlyjs else False, div_id="audit-forest",
                      config={"displaylogo": False, "responsive": True})
    gaps = result.gaps()
    note = (f"{int(gaps['significant'].sum()) if len(gaps) else 0} clear gap(s) at the {result.confidence:.0%} "
            f"level ({result.n_boot} bootstrap resamples; reference: {result.reference_display}).")
    return (f"{head}<h3>Findings</h3><ul>{items}</ul><p class=\"note\">{_e(note)}</p>"
            f"<h3>Per group</h3>{_table(table)}<div class=\"figure\"><h3>Gaps from the reference group</h3>{div}</div>")


def build_report(ex, *, title: str, data_description: str, data_fingerprint: str, model_description: str,
                 model_fingerprint: str, params: dict, figures: dict, tables: dict, dot: dict | None = None,
                 generated_at: datetime | None = None, audit=None, audit_title: str | None = None) -> str:
    """One self-contained HTML document describing a fitted explainer and the figures and tables chosen.

    Sections: header (title, date, data and model with their SHA-256 fingerprints), parameters (``params`` and the
    explainer's own settings), the global textual summary, one metarule tree per entry of ``dot`` (rendered as SVG
    when it is a tree, plus its DOT text; ``dot=None`` draws every target's tree, ``dot={}`` none), the rules and
    metarules tables, ``figures`` (plotly figures; plotly.js is embedded once so the file works offline) and
    ``tables`` (DataFrames, first 500 rows). ``generated_at`` defaults to now (UTC).

    The parameters always list the explainer's actionability constraints ("none" when every feature is free).
    ``audit`` (a :class:`tcrex.audit.AuditResult`) adds a "Subgroup audit" section: ``audit_title`` (what was
    audited), the plain-language findings, the per-group table and the gap forest plot.
    """
    check_fitted(ex)
    when = generated_at or datetime.now(timezone.utc)
    if dot is None:
        dot = {f"Metarule tree, target {t}: {s.target.describe()}": metarule_tree_dot(ex, t)
               for t, s in enumerate(ex.targets_)}
    sections = []
    toc = []

    def section(anchor: str, heading: str, body: str) -> None:
        toc.append(f'<li><a href="#{anchor}">{_e(heading)}</a></li>')
        sections.append(f'<section id="{anchor}"><h2>{_e(heading)}</h2>{body}</section>')

    section("inputs", "Data and model", _kv([("data", data_description), ("model", model_description)],
                                            raw={"data fingerprint": _fp(data_fingerprint),
                                                 "model fingerprint": _fp(model_fingerprint)}))
    settings = {k: "default" if v is None else v for k, v in ex.get_params().items()}
    settings.update({"task": getattr(ex, "task_", None), "fit rows": getattr(ex, "n_fit_rows_", None),
                     "features": len(ex.schema_.names)})
    constraints = getattr(ex, "constraints_", None)
    settings["constraints"] = "none" if constraints is None else constraints.describe()
    section("parameters", "Parameters",
            (_kv(params.items()) if params else '<p class="note">none given</p>')
            + "<h3>Explainer settings</h3>" + _kv(settings.items()))
    section("summary", "Global summary", f'<pre class="summary">{_e(ex.summary_text())}</pre>')
    if dot:
        parts = []
        for i, (name, text) in enumerate(dot.items()):
            svg = dot_to_svg(text)
            drawn = f'<div class="tree">{svg}</div>' if svg else \
                '<p class="note">This graph is not a simple tree; paste the DOT text below into any Graphviz ' \
                'viewer to draw it.</p>'
            parts.append(f'<div class="figure" id="{_slug("tree", i)}"><h3>{_e(name)}</h3>{drawn}'
                         f'<details><summary>DOT text (paste into any Graphviz viewer)</summary>'
                         f'<pre>{_e(text)}</pre></details></div>')
        section("trees", "Metarule trees", "".join(parts))
    rules = ex.rules_frame()
    metas = ex.metarules_frame()
    section("rules", "Rules", _table(rules))
    section("metarules", "Metarules", _table(metas))
    if figures:
        parts = []
        first = True
        for i, (name, fig) in enumerate(figures.items()):
            div = fig.to_html(full_html=False, include_plotlyjs=True if first else False, div_id=_slug("figure", i),
                              config={"displaylogo": False, "responsive": True})
            first = False
            parts.append(f'<div class="figure"><h3>{_e(name)}</h3>{div}</div>')
        section("figures", "Figures", "".join(parts))
    plotly_embedded = bool(figures)
    if audit is not None:
        section("audit", "Subgroup audit", _audit_html(audit, audit_title, include_plotlyjs=not plotly_embedded))
    if tables:
        section("tables", "Tables", "".join(f'<div class="figure" id="{_slug("table", i)}"><h3>{_e(name)}</h3>'
                                            f"{_table(df)}</div>" for i, (name, df) in enumerate(tables.items())))
    stamp = when.isoformat(timespec="seconds")
    from . import __version__
    head = (f'<header><h1>{_e(title)}</h1><p class="meta">Generated {_e(stamp)} · T-CREx {_e(__version__)} · '
            f'counterfactual rules and metarules (Bewley et al., ICML 2024)</p>'
            f'<nav><ol>{"".join(toc)}</ol></nav></header>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>{head}{''.join(sections)}"
            f'<footer class="note"><p>Self-contained report: works offline; print from the browser for paper.'
            f"</p></footer></body></html>\n")
