"""The data dictionary's records and formats: JSON round trip, the extended codebook CSV, Table Schema, plain
codebooks, and hostile files (a clear message, nothing applied partly)."""
from __future__ import annotations

import json

import pytest

from tcrex.datasets import credit_card_codebook, credit_card_titles
from tcrex.dictionary import (DataDictionary, FeatureEntry, from_table_schema, read_dictionary, to_csv_text,
                              to_table_schema)
from tcrex.errors import DataError, ParameterError
from tests.support.dictionary_case import STANDING_CODES, SURVEY_CODES


def _card_dictionary():
    codes = {f"status_{k}": [-2, -1, 0] for k in range(1, 7)}
    return DataDictionary.from_parts(credit_card_codebook(), codes, credit_card_titles())


def _survey_dictionary():
    return DataDictionary((
        FeatureEntry("hours_worked", title="hours worked per week", unit="hours", codes=tuple(SURVEY_CODES.items()),
                     actionability="increase_only"),
        FeatureEntry("standing_w2", title="account standing 2 weeks ago", codes=tuple(STANDING_CODES.items()),
                     labels=((1, "level 1"), (2, "level 2")), history=True, description="weekly standing, week 2"),
        FeatureEntry("grade", kind="ordered", order=("low", "mid", "high"), labels=(("low", "lowest grade"),)),
        FeatureEntry("civil_state", kind="categorical", actionability="immutable",
                     labels=(("k1", "wed"), ("k2", "unwed")))))


@pytest.mark.parametrize("make", [_card_dictionary, _survey_dictionary])
def test_every_format_round_trips_the_dictionary(make):
    d = make()
    assert DataDictionary.from_json(d.to_json()) == d
    assert read_dictionary(to_csv_text(d).encode(), "d.csv") == d
    assert read_dictionary(json.dumps(to_table_schema(d)).encode(), "schema.json") == d
    assert from_table_schema(to_table_schema(d)) == d


def test_the_card_dictionary_says_codes_titles_and_labels():
    d = _card_dictionary()
    assert d.special_codes["status_1"] == [-2, -1, 0]
    assert d.titles["status_6"] == "repayment status six months ago"
    assert d.value_labels["status_1"][-2] == "no consumption that month"
    assert d["status_1"].value_labels[3] == "3 months late"
    assert dict(d["sex"].labels) == {"c1": "male", "c2": "female"}


def test_the_extended_csv_declares_codes_titles_and_properties():
    text = ("feature,value,label,kind\n"
            "status_1,,repayment status last month,title\n"
            "status_1,-2,no consumption,special\n"
            "status_1,-1,paid in full,special\n"
            "status_1,1,1 month late,label\n"
            "age,,years,unit\n"
            "age,,increase_only,actionability\n"
            "bill_3,,yes,history\n"
            "edu,,categorical,type\n"
            "edu,e1,university,\n")
    d = read_dictionary(text.encode(), "d.csv")
    assert d["status_1"].title == "repayment status last month"
    assert d["status_1"].special_codes == [-2, -1]
    assert d["status_1"].labels == ((1, "1 month late"),)
    assert d["age"].unit == "years" and d["age"].actionability == "increase_only"
    assert d["bill_3"].history and d.constraints["bill_3"] == "immutable"
    assert d["edu"].kind == "categorical" and d["edu"].labels == (("e1", "university"),)
    # the old three-column codebook still reads, and a row without a value is the column's title
    old = read_dictionary(b"feature,value,label\nx,1,one\nx,,the x column\n", "old.csv")
    assert old["x"].title == "the x column" and old["x"].labels == ((1, "one"),)
    assert read_dictionary(b"feature,value,label\nx,01,zero one\n", "c.csv")["x"].labels == (("01", "zero one"),)


def test_table_schema_fields_categories_and_missing_values():
    doc = {"fields": [
        {"name": "pay_status", "type": "integer", "title": "repayment status",
         "missingValues": [{"value": "-2", "label": "no consumption"}, "-1"]},
        {"name": "marital", "type": "string", "categories": [{"value": "1", "label": "married"}, "2"]},
        {"name": "band", "type": "string", "categories": ["a", "b", "c"], "categoriesOrdered": True},
        {"name": "income", "type": "number", "description": "monthly, net"}],
        "missingValues": ["", "-9"]}
    d = read_dictionary(json.dumps(doc).encode(), "schema.json")
    assert d["pay_status"].codes == ((-2, "no consumption"), (-1, None))
    assert d["marital"].kind == "categorical" and d["marital"].labels == (("1", "married"),)
    assert d["band"].kind == "ordered" and d["band"].order == ("a", "b", "c")
    assert d["income"].special_codes == [-9]  # the schema-level missing value applies to a numeric field
    assert d["income"].description == "monthly, net"


@pytest.mark.parametrize("data, words", [
    (b"feature,value,label\n" + b"x,1,<script>alert(1)</script>\n", "HTML markup"),
    (b"feature,value,label,kind\nx,,<b>bold</b>,title\n", "HTML markup"),
    (b"feature,value,label,kind\nx,1,one,special\nx,1.0,uno,special\n", "twice"),
    (b"feature,value,label,kind\nx,1,one,label\nx,1,uno,special\n", "already has an entry"),
    (b"feature,value,label,kind\nx,abc,text,special\n", "not a number"),
    (b"feature,value,label,kind\nx,,sideways,direction\n", "kind must be one of"),
    (b"feature,value,label,kind\nedu,,categorical,type\nedu,,increase_only,actionability\n", "never increase only"),
    (b'{"x": {"1": "one", "1.0": "uno"}}', "twice"),
    (b'{"format": "tcrex-dictionary", "version": 99, "features": []}', "version 99"),
    (b'{"format": "tcrex-dictionary", "version": 1, "features": [{"name": "x", "codes": [[1, {"a": 1}]]}]}',
     "expected text"),
    (b"[" * 100_000, "nested"),
    (b'{"fields": [{"name": "a", "categories": [[[[[[[[[1]]]]]]]]]}]}', "nested deeper"),
    (b"feature,value,label\n" + b"x,1,=HYPERLINK(\"http://e\")\n" + b"x,2,\x00\n", "NUL"),
    (b"\xff\xfe", "UTF-8"),
    (b"", "empty"),
])
def test_a_hostile_dictionary_is_refused_with_a_clear_message(data, words):
    with pytest.raises(DataError) as err:
        read_dictionary(data, "hostile")
    assert words in str(err.value) and "hostile" in str(err.value)


def test_a_huge_dictionary_is_refused_before_it_is_parsed():
    huge = b"feature,value,label\n" + b"x,1,one\n" * 800_000
    with pytest.raises(DataError, match="at most 5 MB"):
        read_dictionary(huge, "huge.csv")
    many = "feature,value,label\n" + "".join(f"f{i % 50},{i},l\n" for i in range(100_002))
    with pytest.raises(DataError, match="100,000"):
        read_dictionary(many.encode(), "many.csv")


def test_a_formula_in_a_title_stays_text_and_is_neutralised_in_spreadsheets():
    from tcrex.spreadsheet import neutralise

    d = read_dictionary(b'feature,value,label\nx,,=HYPERLINK("http://e")\n', "f.csv")
    assert d["x"].title == '=HYPERLINK("http://e")'
    assert not str(neutralise(d["x"].title)).startswith("=")


def test_records_refuse_what_has_no_meaning():
    with pytest.raises(ParameterError, match="never increase only"):
        FeatureEntry("edu", kind="categorical", actionability="increase_only")
    with pytest.raises(ParameterError, match="special codes are for numeric"):
        FeatureEntry("edu", kind="categorical", codes=((1, "x"),))
    with pytest.raises(ParameterError, match="both a labelled value and a special code"):
        FeatureEntry("x", labels=((1, "one"),), codes=(("1.0", "uno"),))
    with pytest.raises(ParameterError, match="twice"):
        DataDictionary((FeatureEntry("x"), FeatureEntry("x")))
