"""Hostile tables: every table keeps its data or says why. Each case is generated here; a reading
is checked against the values written, and every change the reader makes must come with a finding."""
import io
import random

import numpy as np
import pandas as pd
import pytest

from tcrex.errors import DataError, ParameterError
from tcrex.intake import read_table
from tcrex.intake import data as intake_data

from tests.support import builders as b


def kinds(rep):
    return [f.kind for f in rep.findings]


def finding(rep, kind):
    return next(f for f in rep.findings if f.kind == kind)


def parquet(table) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- line endings
@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
@pytest.mark.parametrize("final", ["", "\r"])
def test_cr_only_line_endings(sep, final):
    X, _ = b.loans(n=30)
    text = X.to_csv(index=False, sep=sep, lineterminator="\r").rstrip("\r") + final
    rep = read_table(text.encode(), "cr.csv")
    assert rep.delimiter == sep
    pd.testing.assert_frame_equal(rep.frame, X, check_dtype=False)
    assert "truncated" not in kinds(rep)


def test_cr_only_truncated_last_line_is_a_finding_not_a_csv_error():
    text = "a,b,c\r1,2,3\r4,5"  # no final line break, last row short: csv.reader([last]) used to raise
    rep = read_table(text.encode(), "cr.csv")
    assert "truncated" in kinds(rep) and rep.frame.shape == (2, 3)


# ---------------------------------------------------------------------------------------------- encodings
def test_mostly_utf8_with_a_few_bad_bytes_stays_utf8_and_names_the_lines():
    lines = [b"name,x"] + [f"café {i},{i}".encode() for i in range(40)]
    for line in (7, 23):  # two lines (1-based) where the é is a Latin-1 byte
        lines[line - 1] = lines[line - 1].replace("é".encode(), b"\xe9")
    rep = read_table(b"\n".join(lines) + b"\n", "mixed.csv")
    assert rep.encoding == "utf-8"
    assert rep.frame["name"].iloc[10] == "café 10"  # never re-decoded as Latin-1 ("cafÃ©")
    assert (rep.frame["name"].str.contains("Ã")).sum() == 0
    f = finding(rep, "encoding")
    assert f.count == 2 and "line(s) 7, 23" in f.message and "\ufffd" in f.message
    assert rep.frame["name"].str.contains("\ufffd").sum() == 2


def test_a_file_that_is_not_utf8_at_all_is_read_as_cp1252_and_named():
    df = pd.DataFrame({"ville": ["Besançon", "Orléans", "Sète"] * 5, "prix €": [1, 2, 3] * 5})
    rep = read_table(df.to_csv(index=False).encode("cp1252"), "fr.csv")
    assert rep.encoding == "cp1252" and list(rep.frame.columns) == ["ville", "prix €"]
    assert rep.frame["ville"].tolist() == df["ville"].tolist()
    assert "Windows-1252" in finding(rep, "encoding").message and "line 1" in finding(rep, "encoding").message


@pytest.mark.parametrize("codec,bom", [("utf-16-le", b""), ("utf-16-be", b""), ("utf-32-le", b""),
                                       ("utf-32-be", b""), ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                                       ("utf-32-le", b"\xff\xfe\x00\x00"), ("utf-32-be", b"\x00\x00\xfe\xff")])
def test_utf16_and_utf32_with_and_without_bom(codec, bom):
    df = pd.DataFrame({"名前": ["Zoë", "Łukasz", "李"] * 4, "x": range(12)})
    rep = read_table(bom + df.to_csv(index=False).encode(codec), "wide.csv")
    pd.testing.assert_frame_equal(rep.frame, df, check_dtype=False)
    if not bom:
        assert rep.encoding == codec and codec.upper().replace("-LE", " LE").replace("-BE", " BE") in \
            finding(rep, "encoding").message


def test_broken_utf16_is_named_as_utf16():
    data = "a,b\n1,2\n".encode("utf-16-le") + b"\x00\xd8" + "3,4\n".encode("utf-16-le")  # a lone surrogate
    with pytest.raises(DataError, match="looks like UTF-16 LE but is not valid UTF-16 LE"):
        read_table(data, "u.csv")


def test_chosen_encoding_wins():
    data = "name,x\nÅsa,1\nÖrjan,2\n".encode("cp1252")
    assert read_table(data, "s.csv", encoding="latin-1").frame["name"].tolist() == ["Åsa", "Örjan"]
    rep = read_table(data, "s.csv", encoding="utf-8")  # wrong choice: replaced and said, never silent
    assert "\ufffd" in rep.frame["name"].iloc[0] and [f.count for f in rep.findings if f.kind == "encoding"] == [None, 2]
    with pytest.raises(DataError, match="the file is not valid UTF-16 \\(with byte-order mark\\) \\(at byte 2\\)"):
        read_table(b"abc", "s.csv", encoding="utf-16")


# ---------------------------------------------------------------------------------------------- delimiters
def test_header_and_rows_split_differently_are_refused_naming_both():
    with pytest.raises(DataError, match="the header has 3 column\\(s\\) when split at commas, but the rows have 3 "
                                        "fields split at semicolons"):
        read_table(b"a,b,c\n1;2;3\n4;5;6\n7;8;9\n", "mix.csv")


def test_rows_that_the_header_delimiter_does_not_split_are_refused():
    with pytest.raises(DataError, match="the header has 3 column\\(s\\) but most rows have 1 field"):
        read_table(b"a,b,c\n1 2 3\n4 5 6\n", "mix.csv")


@pytest.mark.parametrize("sep", [";", "\t", "|", ","])
@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_excel_sep_line(sep, eol):
    X, _ = b.loans(n=20)
    body = X.to_csv(index=False, sep=sep, lineterminator=eol)
    rep = read_table(f"sep={sep}{eol}{body}".encode(), "excel.csv")
    assert rep.delimiter == sep and list(rep.frame.columns) == ["age", "income", "job"]
    pd.testing.assert_frame_equal(rep.frame, X, check_dtype=False)
    assert "sep_line" in kinds(rep)


def test_quoted_header_cells_with_line_breaks():
    rep = read_table(b'a,"Income\n(EUR)","a ""quoted""\r\nname"\n1,2,3\n4,5,6\n', "h.csv")
    assert list(rep.frame.columns) == ["a", "Income (EUR)", 'a "quoted" name']
    assert rep.frame.iloc[1].tolist() == [4, 5, 6] and "renamed" in kinds(rep)


def test_chosen_delimiter_is_used_and_checked():
    data = b"a;b,c\n1;2,5\n3;4,5\n"
    assert read_table(data, "t.csv", delimiter=";").frame.columns.tolist() == ["a", "b,c"]
    assert read_table(data, "t.csv", delimiter=",").frame.columns.tolist() == ["a;b", "c"]
    with pytest.raises(ParameterError, match="delimiter must be one character"):
        read_table(data, "t.csv", delimiter="ab")


# ---------------------------------------------------------------------------------------------- separators
def test_decimal_comma_is_a_finding():
    rep = read_table(b"a;b\n1,5;x\n2,25;y\n", "d.csv")
    assert rep.decimal == "," and rep.frame["a"].tolist() == [1.5, 2.25]
    assert "decimal comma" in finding(rep, "separators").message and "'a'" in finding(rep, "separators").message


def test_ambiguous_comma_is_a_warning_and_the_override_changes_the_reading():
    data = b"a;b\n1,234;x\n2,345;y\n"
    rep = read_table(data, "d.csv")
    assert rep.frame["a"].tolist() == [1.234, 2.345]
    f = finding(rep, "ambiguous_separator")
    assert f.severity == "warning" and "'1,234' could be 1.234 (decimal comma) or 1234" in f.message
    rep = read_table(data, "d.csv", decimal=".", thousands=",")
    assert rep.frame["a"].tolist() == [1234, 2345] and "as chosen" in finding(rep, "separators").message


def test_thousands_point_with_decimal_comma():
    rep = read_table(b"a;b\n1.234.567,5;1\n2,25;2\n", "d.csv")
    assert rep.frame["a"].tolist() == [1234567.5, 2.25] and (rep.decimal, rep.thousands) == (",", ".")


def test_quoted_thousands_commas_in_a_comma_file():
    rep = read_table(b'a,b\n"1,234",x\n"2,345,678.5",y\n', "us.csv")
    assert rep.frame["a"].tolist() == [1234, 2345678.5] and (rep.decimal, rep.thousands) == (".", ",")
    assert "separators" in kinds(rep)


def test_loose_grouping_is_never_read_as_a_number():
    rep = read_table(b"a;b\n1.5,2;1\n12,34,5;2\n", "d.csv")  # not a consistent way of writing numbers
    assert rep.frame["a"].tolist() == ["1.5,2", "12,34,5"] and "separators" not in kinds(rep)


# ---------------------------------------------------------------------------------------------- exact values
def test_leading_zero_codes_are_kept_as_text():
    rep = read_table(b"code,x\n007,1\n07,2\n7,3\n", "c.csv")
    assert rep.frame["code"].tolist() == ["007", "07", "7"]
    assert "leading zeros" in finding(rep, "kept_as_text").message


def test_a_leading_zero_far_down_the_file_still_keeps_the_column():
    rows = [f"{i},{i % 7}" for i in range(1, 450_000)] + ["0042,1"]
    rep = read_table(("zip,x\n" + "\n".join(rows) + "\n").encode(), "c.csv")
    assert rep.frame["zip"].iloc[-1] == "0042" and rep.frame["zip"].iloc[0] == "1"
    assert pd.api.types.is_integer_dtype(rep.frame["x"])


@pytest.mark.parametrize("gap", [True, False])
def test_integers_beyond_2_53_are_kept_exactly(gap):
    values = [2 ** 53 + 1, 2 ** 53, 2 ** 53 + 2]
    cells = [str(values[0]), "" if gap else "5", str(values[1]), str(values[2])]
    rep = read_table(("big,x\n" + "\n".join(f"{c},{i}" for i, c in enumerate(cells)) + "\n").encode(), "b.csv")
    got = rep.frame["big"].dropna().tolist()
    assert got[0] == str(values[0]) and str(values[1]) in got and len(set(got)) == len(got)
    assert "2^53" in finding(rep, "kept_as_text").message


def test_parquet_integers_beyond_2_53_are_kept_exactly():
    import pyarrow as pa

    data = parquet(pa.table({"big": pa.array([2 ** 53 + 1, None, 2 ** 53], pa.int64()), "x": [1, 2, 3]}))
    rep = read_table(data, "b.parquet")
    assert rep.frame["big"].tolist()[::2] == [str(2 ** 53 + 1), str(2 ** 53)]
    assert "kept_as_text" in kinds(rep)


# ---------------------------------------------------------------------------------------------- Parquet
def test_parquet_binary_column_that_is_not_utf8():
    import pyarrow as pa

    data = parquet(pa.table({"blob": pa.array([b"caf\xe9", b"ok", None], pa.binary()), "x": [1, 2, 3]}))
    rep = read_table(data, "bin.parquet")
    assert rep.frame["blob"].tolist()[:2] == ["caf\ufffd", "ok"]
    f = finding(rep, "encoding")
    assert f.column == "blob" and f.count == 1


def test_parquet_text_column_holding_invalid_utf8():
    import pyarrow as pa

    bad = pa.array([b"caf\xe9", b"x"], pa.binary()).view(pa.string())  # declared text, not UTF-8
    rep = read_table(parquet(pa.table({"s": bad, "n": [1, 2]})), "s.parquet")
    assert rep.frame["s"].tolist() == ["caf\ufffd", "x"] and finding(rep, "encoding").count == 1


def test_parquet_binary_utf8_column_is_read_as_text():
    import pyarrow as pa

    rep = read_table(parquet(pa.table({"s": pa.array([b"caf\xc3\xa9", b"x"], pa.binary()), "n": [1, 2]})),
                     "s.parquet")
    assert rep.frame["s"].tolist() == ["café", "x"] and "binary_as_text" in kinds(rep)


def test_parquet_row_bomb_is_refused_from_the_metadata():
    import pyarrow as pa

    data = parquet(pa.table({"x": pa.array(np.zeros(3_000_000, dtype=np.int64))}))  # RLE: a few KB
    assert len(data) < 100_000
    with pytest.raises(DataError, match="declares 3,000,000 rows × 1 columns, about 23 MB once read; the limit is "
                                        "1.9 MB"):
        read_table(data, "bomb.parquet", max_bytes=200_000)
    assert read_table(data, "bomb.parquet").n_rows == 3_000_000  # the same file within the default limit


# ---------------------------------------------------------------------------------------------- never raw
def _mutations(seed: int, n: int):
    rng = random.Random(seed)
    X, _ = b.loans(n=60, seed=seed)
    base = X.to_csv(index=False).encode()
    pieces = [b"\r", b"\n", b"\r\n", b'"', b",", b";", b"\t", b"\xe9", b"\xff\xfe", b"\x00", b"sep=;\n",
              b"\xc3", b"007", b"1,234", b"=cmd|' /C calc'!A0", "é".encode(), b"\xef\xbb\xbf", b"9" * 20]
    for _ in range(n):
        yield b.insert_or_delete(base, rng, pieces, 6)


@pytest.mark.parametrize("seed", range(4))
def test_mutated_csv_files_read_or_refuse_with_their_own_message(seed):
    for data in _mutations(seed, 60):
        try:
            read_table(data, "m.csv")
        except DataError as exc:
            assert "in the table reader" not in str(exc), str(exc)  # the safety net caught a case without its own message


def test_any_library_exception_becomes_a_data_error(monkeypatch):
    """The last line of defence (fault injected: no real input is known to reach it any more)."""
    def boom(*args, **kwargs):
        raise KeyError("internal detail")

    monkeypatch.setattr(intake_data, "check_frame", boom)
    with pytest.raises(DataError, match="'t.csv' could not be read: an unexpected KeyError in the table reader"):
        read_table(b"a,b\n1,2\n", "t.csv")


def test_a_chosen_delimiter_wins_over_the_sep_line():
    rep = read_table(b"sep=;\na,b\n1,2\n3,4\n", "t.csv", delimiter=",")
    assert list(rep.frame.columns) == ["a", "b"] and rep.frame["b"].tolist() == [2, 4]
    assert "the comma you chose was used" in finding(rep, "sep_line").message


def test_utf16_of_mostly_cjk_text_without_bom_is_read_once_the_encoding_is_chosen():
    df = pd.DataFrame({"名前": ["李小龍", "王菲", "周杰倫"] * 5, "年": ["二〇二〇", "一九九九", "二〇〇一"] * 5})
    data = df.to_csv(index=False).encode("utf-16-le")
    with pytest.raises(DataError, match="choose its encoding under 'How to read this file'"):
        read_table(data, "cjk.csv")  # too few NUL bytes to recognise: refused and told how, never guessed
    rep = read_table(data, "cjk.csv", encoding="utf-16-le")
    pd.testing.assert_frame_equal(rep.frame, df, check_dtype=False)


@pytest.mark.parametrize("meta", [b"{broken", b"\xff\xfe not utf-8", b'{"index_columns": ["nowhere"], "columns": 7}'])
def test_parquet_with_damaged_pandas_metadata_is_read_with_a_finding(meta):
    import pyarrow as pa

    table = pa.Table.from_pandas(pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}))
    table = table.replace_schema_metadata({**table.schema.metadata, b"pandas": meta})
    rep = read_table(parquet(table), "meta.parquet")
    assert rep.frame["a"].tolist() == [1, 2, 3] and rep.frame["b"].tolist() == ["x", "y", "z"]
    assert "metadata" in kinds(rep)
