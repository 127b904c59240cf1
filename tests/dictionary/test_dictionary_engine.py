"""TCREx(dictionary=...): declared codes are special codes (no verified point moves into or out of one), titles
and labels speak in every sentence and rule, ranges name the codes they span, suggested actionability applies by
default with a dictionary, and the JSON export keeps it all. On the credit-card table and on a table shaped
differently (97/98/99 and -1/0 codes, other names, more features)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tcrex import TCREx
from tcrex.dictionary import DataDictionary, FeatureEntry, read_dictionary, suggest, to_csv_text, to_table_schema
from tcrex.errors import ParameterError, TCRExError
from tcrex.text import box_conditions, value_text
from tests.support.dictionary_case import card_case, code_moves, survey_case

CASES = {"card": card_case, "survey": survey_case}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    return CASES[request.param]()


def _as(form: str, d: DataDictionary) -> DataDictionary:
    if form == "object":
        return d
    if form == "json":
        return read_dictionary(d.to_json().encode(), "d.json")
    if form == "csv":
        return read_dictionary(to_csv_text(d).encode(), "d.csv")
    return read_dictionary(json.dumps(to_table_schema(d)).encode(), "schema.json")


def _verified_texts(points):
    ok = points["recourse"].eq("verified").fillna(False).to_numpy(bool)
    return points.loc[ok], ok


@pytest.mark.parametrize("form", ["object", "json", "csv", "table_schema"])
def test_no_verified_point_moves_into_or_out_of_a_declared_code(case, form):
    X, model, d = case
    rows = X.iloc[:300]
    ex = TCREx(dictionary=_as(form, d), constraints={}).fit(X, model)
    assert {n: ex.schema_.features[ex.schema_.index(n)].special_codes for n in d.special_codes} == d.special_codes
    points = ex.counterfactuals(rows, model=model, reference=X)
    moved, verified = code_moves(rows, points, d)
    assert verified > 0 and moved == 0
    done, _ = _verified_texts(points)
    for _, row in done.iterrows():  # every changed feature is named by its title
        for name in row["changed"]:
            title = d[name].title
            assert f"{title} ({name})" in row["text"], (name, row["text"])


def test_without_the_dictionary_advice_moves_into_codes(case):
    """The comparison the dictionary is for: the same fit without it moves features into or out of codes."""
    X, model, d = case
    rows = X.iloc[:300]
    points = TCREx().fit(X, model).counterfactuals(rows, model=model, reference=X)
    assert code_moves(rows, points, d)[0] > 0


def test_no_range_spans_a_code_without_naming_it(case):
    X, model, d = case
    ex = TCREx(dictionary=d, constraints={}, rho=0.01).fit(X, model)
    spans = 0
    for sol in ex.targets_:
        for boxes, n in ((sol.rules, sol.n_rules), (sol.metarules, len(sol.metarules))):
            for r in range(n):
                for i, c in box_conditions(ex.schema_, boxes, r).items():
                    f = ex.schema_.features[i]
                    low = -np.inf if c["bounds"].get("low") is None else c["bounds"]["low"]
                    high = np.inf if c["bounds"].get("high") is None else c["bounds"]["high"]
                    inside = [code for code in f.special_codes if low < code <= high]
                    if f.is_categorical or not inside or c["text"].startswith("= "):
                        continue
                    spans += 1
                    for code in inside[:3]:
                        assert value_text(float(code), f.labels) in c["text"], (f.name, c["text"])
    assert spans > 0
    frame = ex.rules_frame()
    assert all(any(d[name].title in text for name in d.titles) or text == "any input"
               for text in frame["conditions"])


def test_the_json_export_keeps_the_dictionary_titles_and_applied_suggestions(case):
    X, model, d = case
    ex = TCREx(dictionary=d).fit(X, model)
    back = TCREx.from_json(ex.to_json())
    assert back.dictionary_ == d and back.dictionary == d
    assert back.suggested_constraints_ == ex.suggested_constraints_ and ex.suggested_constraints_
    assert [f.title for f in back.schema_.features] == [f.title for f in ex.schema_.features]
    rows = X.iloc[:80]
    assert back.explain(rows, model=model)["text"].tolist() == ex.explain(rows)["text"].tolist()
    # an export written without a dictionary still loads, with none, and stays version 5 (older readers load it);
    # one with a dictionary is version 6, which a version-5 reader refuses instead of dropping its words
    plain_text = TCREx().fit(X, model).to_json()
    plain = TCREx.from_json(plain_text)
    assert plain.dictionary_ is None and plain.suggested_constraints_ == {}
    assert json.loads(plain_text)["version"] == 5 and json.loads(ex.to_json())["version"] == 6
    assert json.loads(ex.to_json(effectiveness=ex.effectiveness()))["version"] == 6


def test_suggested_actionability_applies_by_default_with_a_dictionary(case):
    X, model, d = case
    ex = TCREx(dictionary=d).fit(X, model)
    applied = ex.constraints_.to_dict()
    age = "age" if "age" in X.columns else "years_of_age"
    marital = "marital_status" if "marital_status" in X.columns else "civil_state"
    history = [c for c in X.columns if c.startswith(("status_", "standing_w"))]
    assert applied[age] == {"kind": "increase_only"}
    assert applied[marital] == {"kind": "immutable"}
    assert all(applied[c] == {"kind": "immutable"} for c in history[1:]) and history[0] not in applied
    assert set(ex.suggested_constraints_) == set(applied)
    for name, spec in applied.items():  # a categorical feature never gets a direction
        if ex.schema_.features[ex.schema_.index(name)].is_categorical:
            assert spec == {"kind": "immutable"}
    # switched off: constraints={}, or an explicit empty entry for one feature
    assert TCREx(dictionary=d, constraints={}).fit(X, model).constraints_.to_dict() == {}
    off = TCREx(dictionary=d.replace_entry(FeatureEntry(age))).fit(X, model)
    assert age not in off.constraints_.to_dict() and marital in off.constraints_.to_dict()
    # an explicit dict is exactly what applies (no suggestion), with the dictionary's declarations
    assert TCREx(dictionary=d, constraints={age: "immutable"}).fit(X, model).constraints_.to_dict() == {
        age: {"kind": "immutable"}}


def test_a_codebook_labelling_numbers_asks_whether_they_are_codes():
    X, model, d = card_case(n=600)
    ex = TCREx(value_labels=d.value_labels, constraints={}).fit(X, model)
    notes = " ".join(ex.dictionary_notes_)
    assert "status_1" in notes and "as codes?" in notes and "no consumption that month" in notes
    declared = TCREx(dictionary=d, constraints={}).fit(X, model)
    assert not any("as codes?" in n for n in declared.dictionary_notes_)


def test_suggest_finds_codes_history_and_protected_columns(case):
    X, _, d = case
    found = suggest(X)
    codes = {s.feature: s.value for s in found.of("codes")}
    for name, declared in d.special_codes.items():
        assert codes.get(name) == declared, (name, codes.get(name))
    assert found.dictionary.special_codes == {n: codes[n] for n in codes}
    history = {s.feature for s in found.of("history")}
    assert history and all(n[-1] != "1" for n in history)
    immutable = {s.feature for s in found.of("actionability") if s.value == "immutable"}
    assert {"marital_status", "sex"} <= immutable or "civil_state" in suggest(X, d).dictionary.constraints
    assert all(s.feature in X.columns for s in found.items)
    assert {feature for feature, field, _ in found.messages() if field == "codes"} == set(codes)


def test_a_dictionary_that_contradicts_the_data_is_refused_before_anything_is_fitted():
    X, model, d = survey_case(n=300)
    bad = d.replace_entry(FeatureEntry("region", codes=((1, "code"),)))
    ex = TCREx(dictionary=bad)
    with pytest.raises(TCRExError, match="region"):  # codes make it numeric; its values are text
        ex.fit(X, model)
    assert not hasattr(ex, "schema_")
    with pytest.raises(ParameterError, match="DataDictionary"):
        TCREx(dictionary=["not", "a", "dictionary"]).fit(X, model)


def test_without_a_dictionary_the_intake_names_the_status_columns_and_their_codes(case):
    import io

    from tcrex.intake import read_table

    X, _, d = case
    buf = io.BytesIO()
    X.to_csv(buf, index=False)
    found = {f.column: f for f in read_table(buf.getvalue(), "table.csv").findings if f.kind == "special_codes"}
    from tcrex import sentinel_codes

    detected = {n for n in d.special_codes if sentinel_codes(X[n])[0]}
    for name, codes in d.special_codes.items():
        if name in detected:
            continue  # the engine detects them on its own (the "sentinel" finding says so)
        assert name in found, name
        assert all(str(c).replace("-", "−") in found[name].message for c in codes)


def test_update_puts_a_dictionarys_words_on_restored_rules_and_refuses_other_codes():
    X, model, d = survey_case(n=800)
    plain = TCREx(dictionary=DataDictionary.from_parts(special_codes=d.special_codes), constraints={}).fit(X, model)
    restored = TCREx.from_json(plain.to_json())
    assert "savings balance (savings)" not in " ".join(restored.rules_frame()["conditions"])
    worded = restored.update(dictionary=d)
    assert worded.dictionary_ == d and worded.schema_.features[0].title == "savings balance"
    said = " ".join(worded.rules_frame()["conditions"])
    assert any(f"{e.title} ({e.name})" in said for e in d.entries if e.title)
    other = d.replace_entry(FeatureEntry("hours_worked", codes=((99, "refused"),)))
    with pytest.raises(ParameterError, match="fit again with this dictionary"):
        restored.update(dictionary=other)
    assert restored.dictionary_ == d  # the failed update left the explainer as it was


def test_the_report_sentence_names_features_by_the_fit_dictionarys_titles():
    """`tcrex report` gives no titles of its own: the first sentence takes them from the dictionary the rules were
    fitted with (kept in the rules JSON), so a nightly report reads as the dashboard's Overview does."""
    from tcrex import TCREx
    from tcrex.report import ReportOptions, report_summary

    from tests.support.dictionary_case import card_case

    X, model, dictionary = card_case(n=1200)
    ex = TCREx.from_json(TCREx(dictionary=dictionary, target=0).fit(X, model).to_json())
    cf = ex.counterfactuals(X, model=model, reference=X)
    options = ReportOptions(title="t", data_description="d", data_fingerprint="f", model_description="m",
                            model_fingerprint="g", params={}, counterfactuals=cf, people=X)
    sentence = report_summary(ex, options)
    titles = dictionary.titles
    named = [f for f in titles if f"({f})" in sentence]
    assert named and all(f"{titles[f]} ({f})" in sentence for f in named), sentence
