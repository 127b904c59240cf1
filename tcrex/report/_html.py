"""A self-contained HTML report of a fitted explainer for stakeholders: one string that works offline, on a
projector and on paper.

It is written for a board: a main part (an executive page, then one short section per question -- who gets recourse,
how hard it is, where groups differ, what changed between models -- each a chart and two sentences) and an appendix
with everything technical (glossary, the chosen people, rules, metarules and their trees, the full audit and
comparison, aggregates, parameters), collapsed on screen and starting on a new page in print. Numbers are written
for people (shares as %, differences in points with their intervals, notes instead of yes/no columns); headings are
words, not column names; every table wraps to the page (1280 px on screen, A4 on paper); charts and table rows are
never split across printed pages. It carries aggregates, rules and the chosen individuals -- not the uploaded table
-- unless the caller passes ``include_rows=True`` with ``rows``; a "What this report contains" note says which.
plotly.js (about 4.9 MB) is embedded only when plotly ``figures`` are passed (the subgroup audit's forest plot is
static SVG). Every string that comes from the user (titles, descriptions, parameters, column names, category values)
is HTML-escaped, and values are formatted (no raw ``True``/``False`` or numpy reprs).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import pandas as pd

from .. import check_fitted, __version__
from ..figures import change_keep_counts, dot_to_svg, metarule_tree_html
from ..population import PRACTICAL_DEFAULT
from ..text import pluralise, RULES_ALONE
from ._groups import _audit_headline, _audit_html, comparison_html, _what_changed, _where_groups_differ
from ._markup import _bars, _CSS, _e, _fp, _full, _kv, MAX_TABLE_ROWS, _slug, _table
from ..vocabulary import is_verified
from ._recourse import (_changes_table, _headline, _how_hard, _individual_html, _performance_html, _top_rules,
                        TOP_RULES, _who_gets_recourse, _with_rule)
from ._summary import summary_sentence
from ._tables import _glossary, MAX_REPORT_LEAVES, _metarules_html, OPEN_ALL_LEAVES, _rules_html


def report_contents(n_individuals: int = 0, rows: int | None = None, total_rows: int | None = None,
                    tables=(), audit: bool = False, comparison: bool = False, figures: bool = False) -> list[str]:
    """What a report will hold, in the words its "What this report contains" note and the Export page use
    (one owner for both): aggregates always; the chosen people's values only when they are included."""
    out = ["aggregates (counts and shares over all people)", "rules and metarules"]
    if audit:
        out.append("the subgroup audit")
    if comparison:
        out.append("the comparison with another model")
    out.append(f"{pluralise(n_individuals, 'chosen person', 'chosen people')} with their feature values"
               if n_individuals else "no individual's values")
    if tables:
        out.append(f"{pluralise(len(tables), 'table')} chosen by the author: " + ", ".join(tables))
    if rows:
        out.append(f"row-level data: the first {min(rows, MAX_TABLE_ROWS):,} of {total_rows or rows:,} rows, "
                   "as requested")
    if figures:
        out.append("interactive charts")
    return out


@dataclass(frozen=True, eq=False, kw_only=True)
class ReportOptions:
    """Everything :func:`build_report` puts in a report besides the explainer: provenance (required), then what
    to add (all optional). Build one per report; :func:`dataclasses.replace` gives a variant.

    >>> ReportOptions(title="Loans", data_description="loans.csv", data_fingerprint=fingerprint_frame(X),
    ...               model_description="XGBoost", model_fingerprint=fingerprint_bytes(b"..."),
    ...               params={"tau": 0.9})  # doctest: +SKIP
    """

    #: The report's title (its ``<h1>`` and ``<title>``).
    title: str
    #: The data and the model in words, with their fingerprints (:func:`fingerprint_frame`,
    #: :func:`fingerprint_bytes`): the first page and the provenance table.
    data_description: str
    data_fingerprint: str
    model_description: str
    model_fingerprint: str
    #: The caller's parameters (``{name: value}``), shown in the provenance table.
    params: dict
    #: plotly figures ``{title: figure}``; plotly.js is embedded once, and only with them.
    figures: dict | None = None
    #: Tables ``{title: DataFrame}`` (first :data:`MAX_TABLE_ROWS` rows each).
    tables: dict | None = None
    #: DOT graphs ``{title: text}`` drawn as SVG instead of the metarule trees (``{}``: no trees).
    dot: dict | None = None
    #: When the report was made; default now (UTC).
    generated_at: datetime | None = None
    #: A :class:`tcrex.audit.AuditResult` to add (its gaps called clear at ``audit_practical`` points), and its title.
    audit: object = None
    audit_title: str | None = None
    audit_practical: float = PRACTICAL_DEFAULT
    #: The chosen individuals: ``{name: (LocalExplanation, feature values)}``.
    individuals: dict | None = None
    #: ``TCREx.explain`` output (summarised: recourse figures, changes per person) and ``feature_actions`` output
    #: (change/keep per feature).
    explanations: pd.DataFrame | None = None
    actions: pd.DataFrame | None = None
    #: Row-level data, embedded (first :data:`MAX_TABLE_ROWS` rows) only with ``include_rows=True``.
    rows: pd.DataFrame | None = None
    include_rows: bool = False
    #: Draw the metarule trees as static outlines (when ``dot`` is not given).
    trees: bool = True
    #: :meth:`TCREx.effectiveness` output: how often the recommended points work on the model.
    effectiveness: object = None
    #: ``TCREx.counterfactuals(X, model=...)`` of the same people: with it, "How hard it is" counts the changes of
    #: the points the model confirms (the advice people get), not the paper's rule changes.
    counterfactuals: pd.DataFrame | None = None
    #: The same people's own values (indexed like ``counterfactuals``): the summary sentence says which way each
    #: verified change goes ("lowering status_1").
    people: pd.DataFrame | None = None
    #: ``{column: title}`` (a data dictionary's titles): the summary sentence names features by them.
    titles: dict | None = None
    #: The report's first sentence; default :func:`tcrex.report.summary_sentence` of ``counterfactuals``.
    summary: str | None = None
    #: Each target in words (``{0: "approved"}``) instead of ``output = 1``.
    outcome_names: dict | None = None
    #: ``{label: name}`` for the classes everywhere else; default the explainer's own.
    class_names: dict | None = None
    #: A :class:`tcrex.performance.ModelPerformance`, or a sentence saying why there is none.
    model_performance: object = None
    #: A :class:`tcrex.compare.ComparisonResult` to add, and its title.
    comparison: object = None
    comparison_title: str | None = None


class _Sections:
    """The report's sections in order, with their table-of-contents entries."""

    def __init__(self):
        self.toc, self.sections = [], []

    def add(self, anchor: str, heading: str, body: str, css_class: str = "") -> None:
        self.toc.append(f'<li><a href="#{anchor}">{_e(heading)}</a></li>')
        cls = f' class="{css_class}"' if css_class else ""
        self.sections.append(f'<section id="{anchor}"{cls}><h2>{_e(heading)}</h2>{body}</section>')

    def question(self, anchor: str, heading: str, body: str | None) -> None:
        """A short main-part section, left out when there is nothing to say."""
        if body:
            self.add(anchor, heading, body, css_class="question")


def _target_names(ex, o: ReportOptions, class_names) -> dict:
    return o.outcome_names or ({t: s.target.describe(class_names) for t, s in enumerate(ex.targets_)}
                               if class_names else {})


def report_summary(ex, o: ReportOptions, names: dict | None = None) -> str:
    """The report's first sentence (``id="summary"``): ``o.summary``, else :func:`summary_sentence` of the verified
    frame (``o.counterfactuals``) in the outcome's name and ``o.titles`` (else the titles of the fit's data
    dictionary); without a model, that nothing was checked."""
    if o.summary:
        return o.summary
    if o.counterfactuals is None or not len(o.counterfactuals):
        return ("No model was given, so no change was checked on it: the figures below say what the rules alone "
                "say, not what the model does.")
    names = names if names is not None else _target_names(ex, o, o.class_names or getattr(ex, "class_names", None))
    outcome = names.get(0, ex.targets_[0].target.describe()) if len(ex.targets_) == 1 else "the favourable outcome"
    # without titles of its own the report names features by the titles the fit's data dictionary gave them
    titles = o.titles or {f.name: f.title for f in ex.schema_.features if f.title} or None
    return summary_sentence(o.counterfactuals, o.people, outcome=outcome, titles=titles,
                            labels=ex.schema_.value_labels)


def _executive_summary(ex, o: ReportOptions, names: dict, embed_rows: bool) -> str:
    """The first page: the summary sentence, model, data, targets, headline figures, top rules, the chosen
    people, the audit, and what the report contains."""
    individuals = o.individuals or {}
    cards, words = _headline(ex, o.explanations, o.effectiveness, o.counterfactuals)
    outcomes = "; ".join(names.get(t, s.target.describe()) for t, s in enumerate(ex.targets_))
    n_rules = sum(s.n_rules for s in ex.targets_)
    n_metas = sum(len(s.metarules) for s in ex.targets_)
    facts = [("model", o.model_description), ("data", o.data_description),
             ("favourable outcome (target)" if len(ex.targets_) == 1 else
              "target outcomes (each individual is explained towards a target it is not in)", outcomes),
             ("found", f"{pluralise(n_rules, 'rule')} and {pluralise(n_metas, 'metarule')} at accuracy ≥ {ex.tau:g}, "
                       "each rule holding "
                       f"≥ {ex.rho:g} of the data")]
    top = _top_rules(ex, o.explanations, effectiveness=o.effectiveness, names=names, checked=False,
                     counterfactuals=o.counterfactuals)
    shown = top[:TOP_RULES]  # three in all, however many targets: the rest are in the appendix
    more = n_rules - sum(t.startswith("To reach ") for t in shown)
    if more > 0:
        shown.append(f"… and {pluralise(more, 'more rule')} in the appendix (Rules).")
    body = (f'<p id="summary" class="summary-sentence">{_e(report_summary(ex, o, names))}</p>' + _kv(facts) + cards + "".join(f"<p>{_e(w)}</p>" for w in words)
            + "<h3>Top rules in plain words</h3><ul>" + "".join(f"<li>{_e(t)}</li>" for t in shown) + "</ul>")
    if individuals:
        body += "<h3>Chosen individual" + ("s" if len(individuals) > 1 else "") + "</h3><ul>" + "".join(
            f"<li><b>{_e(name)}</b>: {_e(exp.text)}</li>" for name, (exp, _) in individuals.items()) + "</ul>"
    if o.audit is not None:
        body += "<h3>Subgroup audit</h3>" + _audit_headline(o.audit, o.audit_practical)
    # what is in here: part of the first page, so a reader knows at once what the file holds
    figures, tables, rows = o.figures or {}, o.tables or {}, o.rows
    contains = report_contents(len(individuals), rows=len(rows) if embed_rows else None,
                               total_rows=len(rows) if embed_rows else None, tables=list(tables),
                               audit=o.audit is not None, comparison=o.comparison is not None, figures=bool(figures))
    absent = "" if embed_rows else " It does <b>not</b> contain the uploaded table."
    body += (f'<p class="contains">This report contains {_e("; ".join(contains))}.{absent} '
             f"{'Interactive charts embed plotly.js.' if figures else 'No scripts: it opens instantly.'} "
             "The technical detail is in the appendix at the end (click to open; it prints on its own "
             "pages).</p>")
    return f'<div class="exec">{body}</div>'


def _main_part(ex, o: ReportOptions, names: dict, embed_rows: bool) -> _Sections:
    """The executive summary, then one short section per question."""
    main = _Sections()
    main.add("executive-summary", "Executive summary", _executive_summary(ex, o, names, embed_rows))
    main.question("who-gets-recourse", "Who gets recourse", _who_gets_recourse(o.explanations, o.effectiveness))
    main.question("how-hard", "How hard it is", _how_hard(o.explanations, o.actions, o.counterfactuals))
    if o.audit is not None:
        main.question("groups-differ", "Where groups differ", _where_groups_differ(o.audit, o.audit_practical))
    if o.comparison is not None:
        main.question("models-changed", "What changed between models", _what_changed(o.comparison))
    main.toc.append('<li><a href="#appendix">Appendix: rules, metarules, trees, audit detail, glossary</a></li>')
    return main


def _trees_section(ex, o: ReportOptions, class_names) -> str | None:
    """The metarule trees: the caller's DOT graphs as SVG, else static outlines (None: no trees)."""
    if o.dot:
        parts = []
        for i, (name, text) in enumerate(o.dot.items()):
            svg = dot_to_svg(text)
            drawn = f'<div class="tree">{svg}</div>' if svg else \
                '<p class="note">This graph is not a simple tree; paste the DOT text below into any Graphviz ' \
                'viewer to draw it.</p>'
            parts.append(f'<div class="figure" id="{_slug("tree", i)}"><h3>{_e(name)}</h3>{drawn}'
                         f'<details><summary>DOT text (paste into any Graphviz viewer)</summary>'
                         f'<pre>{_e(text)}</pre></details></div>')
        return "".join(parts)
    if not (o.trees and o.dot is None):
        return None
    parts = []
    explanations = o.explanations
    for t, sol in enumerate(ex.targets_):
        n = len(sol.metarules)
        pop = explanations if explanations is not None and len(explanations) else None
        body = metarule_tree_html(ex, t, population=pop, max_leaves=MAX_REPORT_LEAVES,
                                  open_all=n <= OPEN_ALL_LEAVES, class_names=class_names)
        parts.append(f'<div class="figure" id="{_slug("tree", t)}">{body}</div>')
    return ('<p class="note">Each tree splits the inputs until one recommendation '
            "applies; open a branch to follow it. Leaves sharing a letter give the same advice.</p>" + "".join(parts))


def _figures_section(figures: dict) -> str:
    """The caller's plotly figures; plotly.js is embedded with the first one only."""
    parts = []
    for i, (name, fig) in enumerate(figures.items()):
        div = fig.to_html(full_html=False, include_plotlyjs=i == 0, div_id=_slug("figure", i),
                          config={"displaylogo": False, "responsive": True})
        parts.append(f'<div class="figure"><h3>{_e(name)}</h3>{div}</div>')
    return "".join(parts)


def _explainer_settings(ex) -> dict:
    """The explainer's own settings (not the caller's ``params``, which the provenance table shows)."""
    own = ex.get_params()
    settings = {k: "default" if v is None else v for k, v in own.items() if k not in ("value_labels", "class_names")}
    # None is not the default of these two: it switches them off
    settings.update({k: "none" for k in ("special_codes", "max_changes") if own.get(k, 0) is None})
    book = ex.schema_.value_labels  # the codebook in words: how many labels, not every one
    settings["value labels"] = (f"{pluralise(sum(map(len, book.values())), 'label')} for "
                                f"{pluralise(len(book), 'feature')}: {', '.join(book)}" if book else "none")
    settings.update({"task": getattr(ex, "task_", None), "fit rows": getattr(ex, "n_fit_rows_", None),
                     "features": len(ex.schema_.names)})
    constraints = getattr(ex, "constraints_", None)
    settings["constraints"] = "none" if constraints is None else constraints.describe()
    return settings


def _provenance(ex, o: ReportOptions, class_names) -> str:
    """Parameters and provenance: data and model with fingerprints, the caller's parameters, the explainer's
    settings and the text summary (collapsed)."""
    return (_kv([("data", o.data_description), ("model", o.model_description)],
                raw={"data fingerprint": _fp(o.data_fingerprint), "model fingerprint": _fp(o.model_fingerprint)})
            + (_kv(o.params.items()) if o.params else '<p class="note">no parameters given</p>')
            + "<h3>Explainer settings</h3>" + _kv(_explainer_settings(ex).items())
            + _full("Global summary (text): every rule and metarule in words",
                    f'<pre class="summary">{_e(ex.summary_text(class_names))}</pre>'))


def _appendix(ex, o: ReportOptions, names: dict, embed_rows: bool, class_names) -> _Sections:
    """The technical detail: glossary, the chosen people, rules, metarules, trees, audit, comparison, aggregates,
    model performance, figures, tables, rows and provenance."""
    app = _Sections()
    app.add("glossary", "Glossary", _glossary())
    individuals = o.individuals or {}
    if individuals:
        app.add("individuals", "Chosen individuals" if len(individuals) > 1 else "Chosen individual",
                "".join(_individual_html(ex, name, exp, x, real_example=embed_rows, class_names=class_names,
                                         target_names=names)
                        for name, (exp, x) in individuals.items())
                + ("" if embed_rows else '<p class="note">The "real example" (the nearest real row following the '
                   "rule) is another person's data and is left out; include row-level data to show it.</p>"))
    eff, explanations, actions = o.effectiveness, o.explanations, o.actions
    rules = ex.rules_frame(effectiveness=eff) if eff is not None else ex.rules_frame()
    metas = ex.metarules_frame(effectiveness=eff) if eff is not None else ex.metarules_frame()
    if names:  # targets by name ("approved"), not "output = 1"
        rules = rules.assign(target_description=rules["target"].map(lambda t: names.get(int(t), "")))
    checked = [t for t in _top_rules(ex, explanations, effectiveness=eff, names=names)
               if t.startswith("To reach ")] if eff is not None else []
    app.add("rules", "Rules", ("<h3>The top rules, checked on the model</h3><ul>"
                               + "".join(f"<li>{_e(t)}</li>" for t in checked) + "</ul>" if checked else "")
            + _rules_html(rules, multi_target=len(ex.targets_) > 1))
    app.add("metarules", "Metarules", _metarules_html(metas, explanations, multi_target=len(ex.targets_) > 1))
    trees = _trees_section(ex, o, class_names)
    if trees is not None:
        app.add("trees", "Metarule trees", trees)
    if o.audit is not None:
        app.add("audit", "Subgroup audit", _audit_html(o.audit, o.audit_title, o.audit_practical))
    if o.comparison is not None:
        app.add("comparison", "Recourse across models", comparison_html(o.comparison, o.comparison_title))
    agg = []
    cf = o.counterfactuals
    if cf is not None and len(cf):  # the advice people get first; the rules alone after, said as such
        agg.append("<h3>Features each person's confirmed change changes (checked on the model)</h3>"
                   + _changes_table(cf.loc[is_verified(cf), "n_changes"]))
    if explanations is not None and len(explanations):
        ruled = explanations["changes"][_with_rule(explanations)]
        if cf is not None and len(cf):
            agg.append(_full(RULES_ALONE.capitalize() + ": features each person's rule asks to change",
                             _changes_table(ruled, inside_rule=True)))
        else:
            agg.append("<h3>Features each person's rule asks to change (the paper's rules, not checked on a model)"
                       "</h3>" + _changes_table(ruled))
    if actions is not None and len(actions):
        agg.append("<h3>Change or keep, per feature</h3>" + _bars(change_keep_counts(actions)))
    if agg:
        app.add("aggregates", "Changes per person and per feature", "".join(agg))
    if o.model_performance is not None:
        app.add("model-performance", "How well the model does", _performance_html(o.model_performance))
    if o.figures:
        app.add("figures", "Figures", _figures_section(o.figures))
    if o.tables:
        app.add("tables", "Tables", "".join(f'<div class="figure" id="{_slug("table", i)}"><h3>{_e(name)}</h3>'
                                            f"{_table(df)}</div>" for i, (name, df) in enumerate(o.tables.items())))
    if embed_rows:
        app.add("rows", "Row-level data (included on request)", _table(o.rows))
    app.add("parameters", "Parameters and provenance", _provenance(ex, o, class_names))
    return app


def _document(title: str, when: datetime, main: _Sections, appendix: _Sections) -> str:
    """The whole HTML document: header with the main part's contents, the main part, the collapsed appendix."""
    stamp = when.isoformat(timespec="seconds")
    head = (f'<header><h1>{_e(title)}</h1><p class="meta">Generated {_e(stamp)} · T-CREx {_e(__version__)} · '
            f'counterfactual rules and metarules (Bewley et al., ICML 2024)</p>'
            f'<nav><ol>{"".join(main.toc)}</ol></nav></header>')
    details = ('<details class="appendix" id="appendix"><summary>Appendix: the technical detail (the full rule and '
               "metarule lists, trees, intervals, fingerprints, glossary)</summary>" + "".join(appendix.sections)
               + "</details>")
    body = f'<main id="main-part">{"".join(main.sections)}</main>' + details
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>{head}{body}"
            f'<footer class="note"><p>Self-contained report: works offline; print from the browser for paper.'
            f"</p></footer></body></html>\n")


def build_report(ex, options: ReportOptions) -> str:
    """One self-contained HTML document describing a fitted explainer for stakeholders (what goes in:
    :class:`ReportOptions`).

    Order (the main part, then the appendix ``<details class="appendix">``, described in docs/figures.md): an
    **executive summary** on one page (model, data, the favourable outcome of every target, headline
    recourse figures from ``explanations``, the top rules in plain words, the chosen individuals' advice, the
    audit's overview and clear gaps, and a note on **what the report contains**), one short section per question
    (who gets recourse, how hard it is, where groups differ, what changed between models), then the appendix:
    the glossary, the **chosen individuals** (the features their rule names first, the rest collapsed), the
    **rules** (most recommended first; beyond :data:`SUMMARY_RULES` the rest collapsed), the **metarules** (the
    :data:`SUMMARY_METARULES` that advise the most individuals; all of them collapsed), the **metarule trees** as
    static outlines (opened fully up to 60 metarules, else at the root; ``trees=False`` for none; a ``dot`` dict
    instead draws those DOT graphs as SVG sized to fit), the subgroup ``audit`` (its gaps called clear by
    :func:`tcrex.audit.clear_gaps` at ``audit_practical`` points; its forest plot as static SVG), the comparison
    (:func:`comparison_html`), the aggregates (how many features to change; change/keep per feature), the
    model's performance, the caller's ``figures`` and ``tables``, row-level data (only with ``include_rows=True``
    and ``rows``), and parameters with the data and model fingerprints (the text summary collapsed).

    ``class_names`` (default the explainer's own) names the classes in model outputs, the rules and metarules
    tables and the text summary (and the targets when ``outcome_names`` is not given). Rules are named by their
    one id (``rule_id``: "R1", "R2", …).
    """
    check_fitted(ex)
    class_names = options.class_names
    if class_names is None:  # the explainer's own (TCREx(class_names=...), kept in its JSON)
        class_names = getattr(ex, "class_names", None) or None
    names = _target_names(ex, options, class_names)
    embed_rows = options.include_rows and options.rows is not None
    main = _main_part(ex, options, names, embed_rows)
    appendix = _appendix(ex, options, names, embed_rows, class_names)
    return _document(options.title, options.generated_at or datetime.now(timezone.utc), main, appendix)
