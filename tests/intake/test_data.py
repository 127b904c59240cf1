"""Data intake: CSV/Parquet reading, hostile tables, findings, missing-value handling and the rho row check."""
import io

import numpy as np
import pandas as pd
import pytest

from tcrex.errors import DataError, ParameterError
from tcrex import check_rows_for_rho
from tcrex.intake import handle_missing, read_table, target_findings

from tests.support import builders as b


def csv_bytes(df, sep=",", encoding="utf-8", **kw):
    return df.to_csv(index=False, sep=sep, **kw).encode(encoding)


# ---------------------------------------------------------------------------------------------- positive
def test_plain_csv_round_trip():
    X, _ = b.loans()
    rep = read_table(csv_bytes(X), "loans.csv")
    assert rep.format == "csv" and rep.encoding == "utf-8" and rep.delimiter == ","
    pd.testing.assert_frame_equal(rep.frame, X, check_dtype=False)
    assert rep.findings == [] and rep.n_rows == 400 and rep.n_columns == 3


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_delimiters(sep):
    X, _ = b.loans(n=50)
    rep = read_table(csv_bytes(X, sep=sep), "t.csv")
    assert rep.delimiter == sep and list(rep.frame.columns) == ["age", "income", "job"]


def test_semicolon_latin1_with_decimal_commas():
    df = pd.DataFrame({"région": ["Île-de-France", "Provence", "Bretagne"] * 10,
                       "revenu": [1234.5, 99.25, 10.0] * 10, "âge": [30, 41, 52] * 10})
    data = df.to_csv(index=False, sep=";", decimal=",").encode("latin-1")
    rep = read_table(data, "fr.csv")
    assert rep.encoding == "latin-1" and rep.delimiter == ";" and rep.decimal == ","
    assert list(rep.frame.columns) == ["région", "revenu", "âge"]
    assert rep.frame["région"].iloc[0] == "Île-de-France"
    assert rep.frame["revenu"].dtype == np.float64 and rep.frame["revenu"].iloc[0] == 1234.5


def test_cp1252_and_utf8_bom():
    df = pd.DataFrame({"name": ["“quoted” – dash €"] * 3, "x": [1, 2, 3]})
    rep = read_table(df.to_csv(index=False).encode("cp1252"), "w.csv")
    assert rep.encoding == "cp1252" and rep.frame["name"].iloc[0] == "“quoted” – dash €"
    rep = read_table(b"\xef\xbb\xbf" + df.to_csv(index=False).encode("utf-8"), "bom.csv")
    assert rep.encoding == "utf-8-sig" and list(rep.frame.columns) == ["name", "x"]
    rep = read_table(df.to_csv(index=False).encode("utf-16"), "u16.csv")
    assert rep.encoding == "utf-16" and rep.frame["name"].iloc[0] == "“quoted” – dash €"


def test_unicode_column_names_csv_and_parquet():
    df = pd.DataFrame({"年齢": [20, 30, 40, 50], "доход": [1.5, 2.5, 3.5, 4.5], "emoji 🚀": ["a", "b", "a", "b"],
                       "naïve café": [1, 0, 1, 0]})
    for data, name in ((csv_bytes(df), "u.csv"), (b.parquet_bytes(df), "u.parquet")):
        rep = read_table(data, name)
        assert list(rep.frame.columns) == list(df.columns)
        pd.testing.assert_frame_equal(rep.frame, df, check_dtype=False)


def test_parquet_round_trip_keeps_dtypes():
    X, _ = b.loans()
    X = X.assign(job=X.job.astype("category"), flag=X.age > 40)
    rep = read_table(b.parquet_bytes(X), "x.parquet")
    assert rep.format == "parquet"
    assert isinstance(rep.frame["job"].dtype, pd.CategoricalDtype) and rep.frame["flag"].dtype == bool


# ---------------------------------------------------------------------------------------------- hostile tables
def test_duplicate_column_names_csv():
    with pytest.raises(DataError, match=r"duplicate column name\(s\) \['a'\]; every column needs a unique name"):
        read_table(b"a,b,a\n1,2,3\n4,5,6\n", "d.csv")


def test_duplicate_column_names_parquet():
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"]), buf)
    with pytest.raises(DataError, match=r"duplicate column name\(s\) \['x'\]"):
        read_table(buf.getvalue(), "d.parquet")


@pytest.mark.slow  # a 10,000-column table: `make test`, not `make test-fast`
def test_ten_thousand_columns_are_refused():
    header = ",".join(f"c{i}" for i in range(10_000))
    row = ",".join("1" for _ in range(10_000))
    data = f"{header}\n{row}\n{row}\n".encode()
    with pytest.raises(DataError, match="the table has 10000 columns; at most 2000 are accepted"):
        read_table(data, "wide.csv")
    wide = pd.DataFrame(np.ones((2, 10_000)), columns=[f"c{i}" for i in range(10_000)])
    with pytest.raises(DataError, match="the table has 10000 columns; at most 2000"):
        read_table(b.parquet_bytes(wide), "wide.parquet")
    narrower = "\n".join(",".join(f"{p}{i}" for i in range(2500)) for p in ("c", "", "")).encode()
    assert read_table(narrower, "wide.csv", max_columns=3000).n_columns == 2500


def test_single_column_is_flagged():
    rep = read_table(b"value\n1\n2\n3\n", "one.csv")
    assert rep.single_column
    assert "single column ('value')" in rep.findings[0].message and "delimiter" in rep.findings[0].message


def test_single_column_because_of_an_unknown_delimiter():
    rep = read_table(b"a:b:c\n1:2:3\n4:5:6\n", "colon.csv")
    assert rep.single_column and rep.n_columns == 1


def test_mixed_types_are_reported():
    df = pd.DataFrame({"income": [str(v) for v in range(40)] + ["?", "unknown"], "x": range(42)})
    rep = read_table(csv_bytes(df), "m.csv")
    assert rep.mixed_type_columns == ["income"]
    msg = next(f.message for f in rep.findings if f.kind == "mixed_types")
    assert "mixes numbers (40 rows) and text (2 rows, e.g. ['?', 'unknown'])" in msg


def test_nan_counts_per_column():
    df = pd.DataFrame({"a": [1.0, np.nan, 3.0, np.nan, 5.0, 6.0], "b": ["x", "y", None, "x", "y", "x"],
                       "c": [1, 2, 3, 4, 5, 6]})
    rep = read_table(csv_bytes(df), "nan.csv")
    assert rep.missing == {"a": 2, "b": 1}
    assert "'a': 2 missing value(s) of 6 rows" in rep.messages


def test_constant_id_like_and_high_cardinality_columns():
    n = 300
    rng = np.random.default_rng(0)
    df = pd.DataFrame({
        "row_id": np.arange(1000, 1000 + n),            # integer sequence
        "customer": [f"C{i:05d}" for i in rng.permutation(n)],  # unique strings
        "country": ["FR"] * n,                         # constant
        "city": rng.choice([f"city{i}" for i in range(120)], n),  # high cardinality
        "income": rng.gamma(3, 15, n),                 # continuous: not an ID even though unique
        "age": rng.integers(18, 70, n),
    })
    rep = read_table(csv_bytes(df), "f.csv")
    assert rep.id_like_columns == ["row_id", "customer"]
    assert rep.constant_columns == ["country"]
    assert rep.high_cardinality_columns == ["city"]
    assert "'country' has the same value ('FR') in every row" in " ".join(rep.messages)


def test_pandas_index_column_is_id_like():
    X, _ = b.loans(n=50)
    rep = read_table(X.to_csv().encode(), "with_index.csv")  # index written as an unnamed first column
    assert rep.id_like_columns == ["Unnamed: 0"]


def test_infinite_values_are_reported():
    rep = read_table(b"a,b\n1,inf\n2,3\n3,-inf\n", "inf.csv")
    assert any(f.kind == "infinite" and f.count == 2 for f in rep.findings)


def test_truncated_csv_is_flagged():
    X, _ = b.loans(n=50)
    data = csv_bytes(X)
    cut = data[: data.rindex(b",")]  # cut inside the last row
    rep = read_table(cut, "cut.csv")
    assert any(f.kind == "truncated" for f in rep.findings)


@pytest.mark.parametrize("name", ["g.csv", "g.parquet", "g.txt", "g"])
@pytest.mark.parametrize("seed", range(3))
def test_binary_garbage_tables(name, seed):
    with pytest.raises(DataError, match="not text|does not look like a CSV|not a valid Parquet"):
        read_table(b.garbage(seed=seed), name)


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
def test_truncated_parquet(fraction):
    X, _ = b.loans()
    data = b.parquet_bytes(X)
    with pytest.raises(DataError, match="not a valid Parquet file|could not be read as Parquet"):
        read_table(data[: int(len(data) * fraction)], "t.parquet")


@pytest.mark.parametrize("data,name,pattern", [
    (b"", "e.csv", "is empty"),
    (b"   \n\n", "e.csv", "holds no data"),
    (b"a,b,c\n", "h.csv", "has a header but no data rows"),
    (b"PK\x03\x04rest", "x.xlsx", "could not be read as an Excel workbook .*save it as CSV"),
    (b"PK\x03\x04rest", "x.ods", "spreadsheet or archive"),
    (b"PK\x03\x04rest", "x.zip", "spreadsheet or archive"),
    (b'a,b\n1,"unterminated\n', "q.csv", "cannot be read"),
    (b"a,b\n1,2,3,4\n", "bad.csv", "the header has 2 column\\(s\\) but most rows have 4 field\\(s\\)"),
    (b"a,b\n1,2\n1,2,3\n", "bad.csv", "Expected 2 fields in line 3, saw 3"),
])
def test_unreadable_tables(data, name, pattern):
    with pytest.raises(DataError, match=pattern):
        read_table(data, name)


def test_size_limit():
    data = csv_bytes(b.loans()[0])
    with pytest.raises(DataError, match=r"'big.csv' is \d+ KB; the limit is 1 KB"):
        read_table(data, "big.csv", max_bytes=1000)


def test_nested_parquet_columns_are_refused():
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"a": [1, 2], "tags": [[1, 2], [3]]}), buf)
    with pytest.raises(DataError, match=r"'n.parquet': column\(s\) 'tags' hold nested values .*flatten them"):
        read_table(buf.getvalue(), "n.parquet")


def test_trailing_delimiters_are_accepted():
    rep = read_table(b"a,b,\n1,2,\n3,4,\n", "t.csv")
    assert rep.frame.to_dict("list") == {"a": [1, 3], "b": [2, 4], "Unnamed: 2": [np.nan, np.nan]} or \
        rep.frame[["a", "b"]].to_dict("list") == {"a": [1, 3], "b": [2, 4]}


def test_spaces_around_header_names_are_removed_and_said():
    rep = read_table(b" a , b\n1,2\n3,4\n", "s.csv")
    assert list(rep.frame.columns) == ["a", "b"] and rep.findings[0].kind == "renamed"
    with pytest.raises(DataError, match="duplicate"):
        read_table(b"a, a\n1,2\n", "s.csv")


# ---------------------------------------------------------------------------------------------- choices
def _with_nans():
    return pd.DataFrame({"age": [20, np.nan, 40, 50, np.nan], "job": ["a", "b", None, "b", "b"],
                         "ok": [1, 2, 3, 4, 5]})


def test_handle_missing_error_lists_counts():
    with pytest.raises(DataError, match=r"missing values in 2 column\(s\) \('age': 2, 'job': 1\)"):
        handle_missing(_with_nans(), "error")


def test_handle_missing_drop():
    df, msg = handle_missing(_with_nans(), "drop")
    assert len(df) == 2 and msg == "dropped 3 of 5 rows with missing values ('age': 2, 'job': 1)"


def test_handle_missing_impute():
    df, msg = handle_missing(_with_nans(), "impute")
    assert df.isna().sum().sum() == 0
    assert df.age.tolist() == [20, 40, 40, 50, 40] and df.job.tolist() == ["a", "b", "b", "b", "b"]
    assert msg == ("imputed 3 missing value(s) — 'age': 2 filled with the median 40; 'job': 1 filled with the most "
                   "frequent value 'b'")


def test_handle_missing_edge_cases():
    clean = pd.DataFrame({"a": [1, 2]})
    assert handle_missing(clean, "drop") == (clean, "no missing values")
    with pytest.raises(ParameterError, match="strategy must be"):
        handle_missing(clean, "guess")
    allnan = pd.DataFrame({"a": [np.nan, np.nan], "b": [1, 2]})
    with pytest.raises(DataError, match="would drop all 2 rows"):
        handle_missing(allnan, "drop")
    with pytest.raises(DataError, match="entirely missing"):
        handle_missing(allnan, "impute")
    df, msg = handle_missing(_with_nans(), "drop", columns=["job"])
    assert len(df) == 4 and "'job': 1" in msg


def test_target_with_one_class():
    df = pd.DataFrame({"x": [1, 2, 3], "y": ["yes", "yes", "yes"]})
    (f,) = target_findings(df, "y")
    assert f.kind == "one_class" and "single value ('yes')" in f.message
    assert target_findings(df.assign(y=["a", "b", "a"]), "y") == []
    with pytest.raises(DataError, match="not in the table"):
        target_findings(df, "label")


def test_rows_for_rho():
    assert check_rows_for_rho(100, 0.02) is None
    assert check_rows_for_rho(50, 0.02) is None
    msg = check_rows_for_rho(30, 0.05)
    assert msg == ("rho=0.05 asks for rules holding at least 2 of 30 rows, which needs 20 rows; use more rows or "
                   "raise rho to at least 0.0333") or msg is None
    msg = check_rows_for_rho(10, 0.05)
    assert "needs 20 rows" in msg and "at least 0.1" in msg
    assert "fraction" in check_rows_for_rho(10, 0)
    assert "no rows" in check_rows_for_rho(0, 0.1)


# ---------------------------------------------------------------------------------------------- sentinel codes
def _bureau(n=300, seed=0):
    """Credit-bureau style columns: counts and months with -7/-8/-9 meaning "no record" / "not applicable"."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"MSinceMostRecentDelq": rng.integers(0, 90, n), "NumTrades": rng.integers(0, 60, n),
                       "Utilisation": rng.normal(0, 1, n).round(3), "Score": rng.integers(300, 850, n)})
    df.loc[:24, "MSinceMostRecentDelq"] = -7
    df.loc[25:30, "MSinceMostRecentDelq"] = -8
    df.loc[31:33, "MSinceMostRecentDelq"] = -9
    df.loc[40:44, "NumTrades"] = 999
    return df


def test_sentinel_codes_are_reported_with_their_row_count_and_the_data_is_unchanged():
    df = _bureau()
    rep = read_table(csv_bytes(df), "bureau.csv")
    found = {f.column: f for f in rep.findings if f.kind == "sentinel"}
    assert set(found) == {"MSinceMostRecentDelq", "NumTrades"}
    neg = found["MSinceMostRecentDelq"]
    assert neg.count == 34 and "−7, −8, −9" in neg.message and "Nothing was changed" in neg.message
    assert found["NumTrades"].count == 5 and "999" in found["NumTrades"].message
    pd.testing.assert_frame_equal(rep.frame, df, check_dtype=False)  # never changed silently


@pytest.mark.parametrize("column", [
    np.random.default_rng(1).normal(0, 1, 300),  # negative values that are measurements
    np.random.default_rng(2).integers(-3, 4, 300),  # a small signed scale
    np.r_[np.random.default_rng(3).integers(0, 50, 298), -1, -2],  # negatives that do not repeat
    np.r_[np.random.default_rng(4).integers(0, 90, 295), [99] * 5],  # 99 close to the other values: an age
])
def test_ordinary_numbers_are_not_sentinels(column):
    rep = read_table(csv_bytes(pd.DataFrame({"x": column, "y": np.arange(len(column)) % 7})), "t.csv")
    assert not [f for f in rep.findings if f.kind == "sentinel"]


def test_sentinel_codes_become_missing_only_on_request():
    from tcrex.intake import sentinels_to_missing

    df = _bureau()
    out, counts = sentinels_to_missing(df, ["MSinceMostRecentDelq", "NumTrades", "Utilisation", "nope"])
    assert counts == {"MSinceMostRecentDelq": 34, "NumTrades": 5}  # Utilisation has none; unknown names skipped
    assert out["MSinceMostRecentDelq"].isna().sum() == 34 and out["NumTrades"].isna().sum() == 5
    assert (out["MSinceMostRecentDelq"].dropna() >= 0).all() and out["NumTrades"].max() < 999
    pd.testing.assert_frame_equal(out[["Utilisation", "Score"]], df[["Utilisation", "Score"]])
    assert (df["MSinceMostRecentDelq"] == -7).sum() == 25  # the input is not changed


def test_a_quoted_field_never_defines_the_delimiter():
    """A comma file whose quoted header and values hold pipes also splits evenly at the pipes (4 columns, the label
    lost); the quoting says commas separate the fields, the finding says so and the override still works."""
    data = b'id,"q1|q2|q3|q4",approved\n' + b"".join(b'%d,"a|b|c|d",%d\n' % (i, i % 2) for i in range(30))
    rep = read_table(data, "t.csv")
    assert rep.delimiter == "," and list(rep.frame.columns) == ["id", "q1|q2|q3|q4", "approved"]
    assert rep.frame["approved"].tolist()[:3] == [0, 1, 0]
    (finding,) = [f for f in rep.findings if f.kind == "delimiter"]
    assert finding.message.startswith("the file splits into columns at commas (3 columns) and also at pipes "
                                      "(4 columns); the comma was chosen because the quoted fields contain pipes")
    assert "How to read this file" in finding.message
    chosen = read_table(data, "t.csv", delimiter="|")
    assert chosen.delimiter == "|" and chosen.n_columns == 4
    assert not [f for f in chosen.findings if f.kind == "delimiter"]


def test_stray_quotes_count_only_quotes_outside_field_boundaries():
    from tcrex.intake._dialects import _stray_quotes

    text = 'a,"b|c",d\n1,"say ""hi""|x",2\n'
    assert _stray_quotes(text, ",") == 0
    assert _stray_quotes(text, "|") == 8  # every quote lands inside a field
    assert _stray_quotes("a|b\n1|2\n", "|") == 0


@pytest.mark.parametrize("sep, name", [(";", "semicolons"), ("\t", "tabs"), ("|", "pipes")])
def test_a_file_read_on_guesses_names_each_guess(sep, name):
    """A file that is not a plain comma-separated one names its delimiter, its encoding and its decimal
    mark in findings (each with where to choose otherwise); a plain CSV names none, a choice is no guess."""
    X, _ = b.loans(n=50)
    X = X.assign(ratio=np.linspace(0.05, 0.95, len(X)))
    rep = read_table(csv_bytes(X, sep=sep), "t.csv")
    said = {f.kind: f.message for f in rep.findings}
    assert said["delimiter"].startswith(f"columns are separated by {name} (detected: {X.shape[1]} columns)")
    assert said["encoding"].startswith("the text was read as UTF-8")
    assert said["separators"].startswith("numbers read with the decimal mark '.' (in ") and "'ratio'" in \
        said["separators"]
    assert all("How to read this file" in m for m in said.values())
    chosen = read_table(csv_bytes(X, sep=sep), "t.csv", delimiter=sep, encoding="utf-8", decimal=".")
    assert [f.kind for f in chosen.findings if "detected" in f.message or "decodes" in f.message] == []
    assert read_table(csv_bytes(X), "t.csv").findings == []


def test_a_decimal_comma_file_says_it_once_per_guess():
    X, _ = b.loans(n=50)
    X = X.assign(ratio=np.linspace(0.05, 0.95, len(X)))
    rep = read_table(csv_bytes(X, sep=";", decimal=","), "t.csv")
    kinds = [f.kind for f in rep.findings]
    assert kinds.count("separators") == 1 and "decimal comma" in rep.findings[kinds.index("separators")].message
    assert kinds.count("delimiter") == 1 and kinds.count("encoding") == 1


def test_sentinel_finding_says_the_codes_stay_codes_as_the_engine_keeps_them():
    """The finding says what the engine does (special_codes="auto": kept as codes, advice never moves into or out
    of them), not "treated as real numbers"; a codebook's labels are named with the codes."""
    import tcrex
    from tcrex.intake._sentinels import sentinel_finding

    df = _bureau()
    rep = read_table(csv_bytes(df), "bureau.csv")
    msg = next(f.message for f in rep.findings if f.column == "MSinceMostRecentDelq")
    assert "real numbers" not in msg and "kept as special codes" in msg
    assert "never moves a value into or out of them" in msg
    ex = tcrex.TCREx(rho=0.05).fit(df, y_pred=(df["Score"] > 600).astype(int).to_numpy())
    assert ex.schema_.features[0].special_codes  # the engine agrees: they are codes
    found = []
    sentinel_finding(df["MSinceMostRecentDelq"], "MSinceMostRecentDelq", found,
                     labels={-7: "no delinquency on record", -9: "no bureau record"})
    assert "−7 (no delinquency on record), −8, −9 (no bureau record)" in found[0].message


# ---------------------------------------------------------------------------------------------- Excel workbooks
def _workbook(*sheets: pd.DataFrame) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    for i, frame in enumerate(sheets):
        sheet = book.active if i == 0 else book.create_sheet(f"extra{i}")
        sheet.append(list(frame.columns))
        for row in frame.itertuples(index=False):
            sheet.append([v.item() if hasattr(v, "item") else v for v in row])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_excel_first_sheet_is_read_and_checked_like_a_csv():
    """The intake owns Excel: the first sheet's values, then every check of a CSV (findings, exact codes)."""
    X, _ = b.loans(n=60)
    rep = read_table(_workbook(X), "loans.xlsx")
    assert rep.format == "xlsx" and rep.n_rows == 60
    pd.testing.assert_frame_equal(rep.frame, X, check_dtype=False)
    assert not [f for f in rep.findings if f.kind == "sheet"]
    # another shape: text codes with leading zeros, a constant column, an id column, and a second sheet
    other = pd.DataFrame({"region": ["007", "012", "100"] * 20, "plan": ["basic"] * 60,
                          "customer_id": [f"C{i:04d}" for i in range(60)], "spend": np.arange(60) * 1.5,
                          "churned": [0, 1, 1] * 20})
    rep = read_table(_workbook(other, X), "accounts.XLSM")
    assert rep.frame["region"].tolist()[:3] == ["007", "012", "100"]
    kinds = {f.kind for f in rep.findings}
    assert {"sheet", "constant", "id_like"} <= kinds, rep.messages
    assert "'Sheet', was read" in rep.messages[0] and "2 sheets" in rep.messages[0]


def test_excel_budgets_and_refusals_say_save_it_as_csv():
    from tcrex.intake._excel import excel_to_csv

    X, _ = b.loans(n=40)
    data = _workbook(X)
    with pytest.raises(DataError, match=r"has more than 100 cells; save it as CSV"):
        excel_to_csv(data, "big.xlsx", max_cells=100)
    with pytest.raises(DataError, match=r"'big.xlsx' is \d+ KB; the limit is 1 KB"):
        read_table(data, "big.xlsx", max_bytes=1000)
    with pytest.raises(DataError, match="empty; save the table as CSV"):
        read_table(_workbook(pd.DataFrame()), "empty.xlsx")
    with pytest.raises(DataError, match="could not be read as an Excel workbook"):
        read_table(b"not a zip at all", "t.xlsx")
