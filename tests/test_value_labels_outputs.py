"""Hostile labels in what the project writes: HTML in a label is escaped in the report and in figures,
a formula-like label is neutralised in spreadsheet exports, and labelled values reach the figures."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from tcrex import TCREx
from tcrex import figures as F
from tcrex.report import ReportOptions, build_report, fingerprint_bytes, fingerprint_frame
from tcrex.spreadsheet import to_csv
from tcrex.ui.pages.data_model import codebook_download, codebook_from_rows, codebook_rows

from tests.support.data import mixed

SCRIPT = '<script>alert("label")</script>'
LABELS = {"job": {"manager": SCRIPT, "teacher": "<img src=x onerror=alert(1)>", "clerk": "=HYPERLINK(\"http://x\")",
                  "nurse": "+cmd|' /C calc'!A0", "driver": "drives & delivers"},
          "owner": {"yes": "owns the home", "no": "rents"}}


@pytest.fixture(scope="module")
def fitted():
    X, y = mixed(n=500)
    ex = TCREx(rho=0.03, tau=0.85, value_labels=LABELS, class_names={1: "<b>yes</b>", 0: "no"}).fit(X, y_pred=y)
    return ex, X, y


def test_labels_are_escaped_in_the_report(fitted):
    ex, X, y = fitted
    assert SCRIPT in ex.summary_text() or "<img" in ex.summary_text()  # the engine keeps the text as given
    row = X.iloc[[0]]
    exp = ex.explain_one(row, y_pred=y[:1])
    html = build_report(ex, ReportOptions(title="t", data_description="d", data_fingerprint=fingerprint_frame(X),
                                          model_description="m", model_fingerprint=fingerprint_bytes(b"m"), params={},
                                          figures={"Rule plot": F.rule_plot(ex, 0, "job", "income", X, y)},
                                          individuals={"row 0": (exp, row.iloc[0])},
                                          explanations=ex.explain(X, y_pred=y)))
    for raw in (SCRIPT, "<img src=x", "<b>yes</b>"):
        assert raw not in html
    assert "&lt;script&gt;alert(" in html or "\\u003cscript" in html
    assert "7 labels for 2 features: job, owner" in html  # the parameters name the codebook, not every label


def test_figures_show_labels_with_codes_and_escape_them(fitted):
    ex, X, y = fitted
    fig = F.rule_plot(ex, 0, "job", "owner", X, y)
    ticks = list(fig.layout.xaxis.ticktext) + list(fig.layout.yaxis.ticktext)
    assert "owns the home (yes)" in ticks and "rents (no)" in ticks
    assert not any("<script>" in t or "<img" in t for t in ticks)
    assert any("&lt;script&gt;" in t for t in ticks)
    dumped = json.dumps(fig.to_plotly_json(), default=str)
    assert "<script>" not in dumped and "<img src" not in dumped
    tree = F.metarule_tree_html(ex, 0)
    assert "<script>alert" not in tree and "<img src" not in tree


def test_formula_labels_are_neutralised_in_spreadsheets(fitted):
    ex, X, y = fitted
    read = pd.read_csv(io.StringIO(codebook_download(ex.value_labels).decode()), dtype=str)
    labels = dict(zip(read.value, read.label))
    assert labels["clerk"] == "'=HYPERLINK(\"http://x\")" and labels["nurse"].startswith("'+cmd")
    assert labels["yes"] == "owns the home"  # plain labels are untouched
    # an export of the rules frame (a cell may start with a label): no cell starts a formula
    frame = ex.rules_frame()[["rule_id", "conditions"]]
    frame["first_label"] = [LABELS["job"]["clerk"]] * len(frame)
    out = to_csv(frame)
    assert ",=HYPERLINK" not in out and "\n=HYPERLINK" not in out


def test_the_codebook_table_round_trips(fitted):
    ex, X, y = fitted
    rows = codebook_rows(ex.schema_, ex.value_labels)
    assert set(rows.feature) == {"job", "owner"}
    edited = rows.copy()
    edited.loc[(rows.feature == "owner") & (rows.value == "no"), "label"] = "  rents a flat "
    edited.loc[(rows.feature == "job") & (rows.value == "driver"), "label"] = ""
    book = codebook_from_rows(ex.schema_, rows, edited)
    assert book["owner"] == {"yes": "owns the home", "no": "rents a flat"}
    assert "driver" not in book["job"]
    ex2 = TCREx.from_json(ex.to_json())
    ex2.update(value_labels=book)
    assert ex2.value_text("owner", "no") == "rents a flat (no)" and ex2.value_text("job", "driver") == "driver"
    assert isinstance(rows, pd.DataFrame)


def test_the_dashboards_rules_json_keeps_the_codebook_and_the_class_names():
    from types import SimpleNamespace

    from tcrex.ui.pages.export import rules_json

    X, y = mixed(n=300)
    ex = TCREx(rho=0.03, tau=0.85, value_labels={"owner": {"yes": "owns the home"}}).fit(X, y_pred=y)
    text = rules_json(SimpleNamespace(explainer=ex), {1: "approved", 0: "rejected", "x": "not a class"})()
    back = TCREx.from_json(text)
    assert back.class_names == {1: "approved", 0: "rejected"}
    assert back.value_labels == {"owner": {"yes": "owns the home"}}
    assert ex.class_names is None  # the fit itself is left as it was


def test_the_loans_sample_ships_its_codebook():
    from tcrex.datasets import LOANS_CODEBOOK, LOANS_VALUE_LABELS, SAMPLE_DATA_DIR, SAMPLES, codebook_csv, \
        load_bundled_loans
    from tcrex.intake import fit_codebook, read_codebook

    path = SAMPLE_DATA_DIR / LOANS_CODEBOOK
    assert SAMPLES["loans"].codebook == LOANS_CODEBOOK
    assert path.read_text(encoding="utf-8") == codebook_csv(LOANS_VALUE_LABELS)  # what build.py writes
    X = load_bundled_loans().drop(columns=["approved"])
    ex = TCREx(rho=0.05).fit(X, y_pred=(X.income > 50).astype(int))
    found = fit_codebook(read_codebook(path.read_bytes(), LOANS_CODEBOOK), ex.schema_)
    assert not found.notes and found.n_labels == 13  # every category of the sample has a label, none left out
    cats = {f.name: set(f.categories) for f in ex.schema_.features if f.is_categorical}
    assert all(set(found.labels[f]) == cats[f] for f in cats)


def test_the_label_columns_codebook_entry_names_the_classes_and_is_not_called_missing():
    """A codebook entry for the label (target) column: the label is in the data, so the entry names its classes
    instead of being reported as a feature "not in the data"."""
    from tcrex import TCREx, datasets
    from tcrex.intake import fit_codebook

    frame = datasets.make_credit_bureau(400, random_state=11)
    target = datasets.CREDIT_BUREAU_TARGET
    X = frame.drop(columns=[target])
    ex = TCREx(rho=0.05, n_trees=1).fit(X, y_pred=(frame[target] == "Good").astype(int).to_numpy())
    found = fit_codebook(datasets.CREDIT_BUREAU_CODEBOOK, ex.schema_, target)
    assert not any(target in note for note in found.notes), found.notes
    assert found.class_names == {"Good": "repaid as agreed", "Bad": "90 days or more past due"}
    assert target not in found.labels  # not a feature of the explainer
    unknown = fit_codebook({**datasets.CREDIT_BUREAU_CODEBOOK, "nope": {"a": "b"}}, ex.schema_, target)
    assert any("'nope'" in note and "not in the data" in note for note in unknown.notes)  # a real miss still said
