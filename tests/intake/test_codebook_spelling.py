"""One value, one spelling in codebooks: a code written two ways (1/1.0, 0/-0, 2/02, -7e0, a Unicode minus, a
full-width digit, text in NFC and NFD) is one value; two labels for it are refused naming both lines, a JSON codebook
with a key twice is refused, labels on a boolean feature survive the rules JSON, and matching a large codebook
against many categories is linear (checked by counting comparisons, never by timing).

Real codebook files read by :func:`tcrex.intake.read_codebook`, real explainers fitted on tables shaped unlike the
bundled sample (other codes, other names, more features).
"""
from __future__ import annotations

import json
import unicodedata

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.codebook import check_value_labels, match_feature, normalise_code
from tcrex.errors import DataError, ParameterError
from tcrex.intake import fit_codebook, read_codebook


@pytest.mark.parametrize("spellings", [
    (1, 1.0, "1", "1.0", "01", "+1", "1e0", "\uff11"),  # full-width 1
    (0, -0.0, "0", "-0", "0.000"),
    (2, "02", "2.0"),
    (-7, "-7e0", "\u22127", "-7.0", "\uff0d\uff17"),  # Unicode minus; full-width minus and seven
])
def test_every_spelling_of_a_number_is_one_value(spellings):
    assert len({normalise_code(s) for s in spellings}) == 1
    assert normalise_code(spellings[0]) == float(spellings[0])


def test_text_is_compared_in_nfc_and_stays_text():
    nfd, nfc = unicodedata.normalize("NFD", "Café"), unicodedata.normalize("NFC", "Café")
    assert nfd != nfc and normalise_code(nfd) == normalise_code(nfc) == nfc
    assert normalise_code(" A14 ") == "A14" and normalise_code("1_000") == "1_000"
    assert normalise_code(True) is True and normalise_code("nan") == "nan" and normalise_code("inf") == "inf"


@pytest.mark.parametrize("first,second", [("1", "1.0"), ("0", "-0"), ("2", "02"), ("-7", "-7e0"),
                                          ("-7", "\u22127"), ("7", "\uff17"),
                                          ("Caf\u00e9", "Cafe\u0301")])
def test_two_labels_for_one_value_are_refused_naming_both_lines(first, second):
    text = f"feature,value,label\nregion,x,other\nstatus,{first},married\nstatus,{second},single\n"
    with pytest.raises(DataError, match=r"codebook.csv, lines 3 and 4: status = .* has two labels, 'married' and "
                                        r"'single'"):
        read_codebook(text.encode(), "codebook.csv")


def test_one_value_spelled_twice_with_one_label_is_kept_once():
    book = read_codebook(b"feature,value,label\nstatus,1,married\nstatus,1.0,married\nstatus,2,single\n", "c.csv")
    assert book == {"status": {"1": "married", "2": "single"}}


def test_two_labels_for_one_value_in_python_are_refused_too():
    with pytest.raises(ParameterError, match=r"1 and '1\.0' are one value with two labels"):
        check_value_labels({"status": {1: "married", "1.0": "single"}})
    # a flag is not a code: True and 1 are two values
    assert check_value_labels({"flag": {True: "yes", "1": "one"}}) == {"flag": {True: "yes", "1": "one"}}


@pytest.mark.parametrize("doc,key", [('{"status": {"1": "married", "1": "single"}}', "1"),
                                     ('{"status": {"1": "a"}, "region": {}, "status": {"2": "b"}}', "status")])
def test_a_json_codebook_with_a_key_twice_is_refused(doc, key):
    with pytest.raises(DataError, match=rf"the key '{key}' appears twice in one object"):
        read_codebook(doc.encode(), "codebook.json")


@pytest.mark.parametrize("reader", ["codebook", "dictionary", "table schema"])
def test_a_key_twice_is_named_with_its_lines_by_every_json_reader(reader):
    # The codebook, the dictionary's own JSON and a Table Schema share one reader: none keeps the last silently.
    from tcrex.dictionary import read_dictionary
    if reader == "table schema":
        doc = '{"fields": [\n  {"name": "status",\n   "title": "status",\n   "title": "marital status"}\n]}'
        key, where = "title", "(lines 3 and 4)"
    else:
        doc = '{\n "status": {\n  "1": "married",\n  "1": "single"\n },\n "region": {"1": "north"}\n}'
        key, where = "1", ""  # "1" is a key three times in the file: which two collide is not guessed
    read = read_codebook if reader == "codebook" else read_dictionary
    with pytest.raises(DataError, match=rf"the key '{key}' appears twice in one object") as err:
        read(doc.encode(), "book.json")
    assert where in str(err.value)
    one = '{\n "status": {\n  "1": "married",\n  "1": "single"\n }\n}'
    with pytest.raises(DataError, match=r"appears twice in one object \(lines 3 and 4\)"):
        read(one.encode(), "book.json")


def _table(n=900, seed=4):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"tenure_months": rng.integers(0, 120, n).astype(float),
                         "code": rng.choice([-9.0, -8.0, 1.0, 2.0, 3.0], n),
                         "branch": rng.choice(["02", "11", "Zürich", "Malmö"], n),
                         "overdraft": rng.random(n) < 0.4,
                         "score": rng.normal(600, 60, n)})


def test_codes_spelled_otherwise_find_their_values_in_the_data():
    X = _table()
    y = ((X.score > 600) & ~X.overdraft).astype(int).to_numpy()
    ex = TCREx(target=1, rho=0.02, tau=0.8).fit(X, y_pred=y)
    nfd = unicodedata.normalize("NFD", "Zürich")
    book = read_codebook(("feature,value,label\n"
                          "code,\u22129,refused to answer\ncode,-8.0,not asked\ncode,０１,owner\n"
                          f"branch,2,Harbour\nbranch,{nfd},Lake office\n").encode(), "codes.csv")
    found = fit_codebook(book, ex.schema_)
    assert found.notes == []
    labelled = ex.update(value_labels=found.labels)
    code = labelled.schema_.features[labelled.schema_.index("code")].labels
    branch = labelled.schema_.features[labelled.schema_.index("branch")].labels
    assert code == {-9.0: "refused to answer", -8.0: "not asked", 1.0: "owner"}
    assert branch == {"02": "Harbour", unicodedata.normalize("NFC", "Zürich"): "Lake office"}


def test_two_categories_with_one_numeric_value_are_two_values():
    matched, unknown = match_feature("zip", True, ["02", "2", "11"], {"2": "two", "011": "eleven", "2.0": "?"})
    assert matched == {"2": "two", "11": "eleven"} and unknown == ["2.0"]  # "2.0" could be "02" or "2"


def test_labels_on_a_boolean_feature_round_trip_through_the_rules_json():
    X = _table()
    y = ((X.score > 600) | X.overdraft).astype(int).to_numpy()
    ex = TCREx(target=1, rho=0.02, tau=0.8,
               value_labels={"overdraft": {True: "has an overdraft", False: "no overdraft"}}).fit(X, y_pred=y)
    text = ex.to_json()
    back = TCREx.from_json(text)
    assert back.value_labels == {"overdraft": {True: "has an overdraft", False: "no overdraft"}}
    assert back.to_json() == text
    assert json.loads(text)  # plain JSON


class _Counted:
    """A category that counts how often it is compared (a quadratic matcher compares every key with every one)."""
    comparisons = 0

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        _Counted.comparisons += 1
        return isinstance(other, _Counted) and other.v == self.v

    def __hash__(self):
        return hash(self.v)

    def __str__(self):
        return f"c{self.v}"


def test_matching_is_linear_in_labels_and_categories():
    categories = [_Counted(i) for i in range(3_000)]
    labels = {f"c{i}": f"label {i}" for i in range(8_000)}
    _Counted.comparisons = 0
    matched, unknown = match_feature("f", True, categories, labels)
    assert len(matched) == 3_000 and len(unknown) == 5_000
    assert _Counted.comparisons <= 2 * (len(categories) + len(labels))  # a scan per label: 2.4e7


def test_a_parquet_file_of_many_one_row_groups_reads_whole_and_equal(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tcrex.intake import read_table
    X = _table(n=3_000)
    path = tmp_path / "tiny-groups.parquet"
    pq.write_table(pa.Table.from_pandas(X, preserve_index=False), path, row_group_size=1)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3_000
    got = read_table(path.read_bytes(), "tiny-groups.parquet").frame
    pd.testing.assert_frame_equal(got, X, check_dtype=False)
