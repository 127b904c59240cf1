"""The CSV dialect: which delimiter separates the fields (the header, the rows and the quoting must agree), the
header row, and parsing the text with it (rows longer than the header are refused unless the surplus is empty)."""
from __future__ import annotations

import csv
import io
import re
import warnings
from collections import Counter

import pandas as pd

from ..errors import DataError
from ._base import short_error
from ._report import Finding

_DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_SAMPLE_CHARS = 200_000
_HEADER_CHARS = 8_000_000
SEP_LINE = re.compile(r'sep=(.)[ \t]*(\r\n|\r|\n)')


def _sample_rows(text: str, delimiter: str, n: int = 200) -> list[list[str]]:
    """The first records (header first) when split at ``delimiter``; quoting and every line ending understood."""
    rows: list[list[str]] = []
    reader = csv.reader(io.StringIO(text[:_SAMPLE_CHARS], newline=""), delimiter=delimiter)
    try:
        for row in reader:
            if row:
                rows.append(row)
            if len(rows) >= n:
                break
    except csv.Error:
        pass  # the sample ends inside a quoted field, or a field is larger than the csv module's limit
    if len(rows) > 1 and len(text) > _SAMPLE_CHARS:
        rows = rows[:-1]  # the sample may cut the last row
    return rows


def _fits(row: list[str], width: int) -> bool:
    return len(row) == width or (len(row) > width and not any(f.strip() for f in row[width:]))


def _delimiter_stats(rows: list[list[str]]) -> tuple[int, float, int, float]:
    """(header width, share of data rows that fit it, most common data-row width, its share)."""
    header, body = len(rows[0]), rows[1:]
    if not body:
        return header, 1.0, header, 1.0
    width, count = Counter(len(r) for r in body).most_common(1)[0]
    return header, sum(_fits(r, header) for r in body) / len(body), width, count / len(body)


def delimiter_name(d: str) -> str:
    return _DELIMITER_NAMES.get(d, repr(d))


def _stray_quotes(text: str, delimiter: str) -> int:
    """How many double quotes in ``text`` do not open or close a quoted field when fields are split at
    ``delimiter``. With the file's real delimiter every quote opens a field (first character), closes it (followed
    by the delimiter or a line end) or is doubled inside it; split at a character that only occurs *inside* quoted
    fields (``id,"q1|q2|q3"`` split at pipes), the quotes land mid-field and are counted here."""
    if '"' not in text:
        return 0
    stray, pos = 0, 0
    field_start, quoted = True, False
    special = re.compile('["\r\n' + re.escape(delimiter) + "]")
    while True:
        m = special.search(text, pos)
        if m is None:
            return stray
        i, c = m.start(), m.group()
        if quoted:
            if c == '"':
                if text[i + 1:i + 2] == '"':  # an escaped quote inside the field
                    pos = i + 2
                    continue
                quoted = False
                nxt = text[i + 1:i + 2]
                if nxt and nxt not in ("\r", "\n", delimiter):
                    stray += 1  # text after the closing quote: this quote did not end a field
                    field_start = False
                    pos = i + 1
                    continue
            pos = i + 1
            continue
        if c == '"':
            if field_start and i == pos:
                quoted = True
            else:
                stray += 1
            field_start = False
            pos = i + 1
            continue
        field_start = True  # a delimiter or a line end: the next character starts a field
        pos = i + 1


def choose_delimiter(text: str, chosen: str | None, findings: list | None = None) -> str:
    """The delimiter (``chosen``, or the one whose header has several columns that the rows agree with), checked
    against the field counts: a header split one way over rows split another way is refused with both named.

    A quoted field never defines the delimiter: when several delimiters split the header and the rows alike (a
    comma file whose quoted fields hold pipes, ``"q1|q2|q3"``, splits at pipes too), the one the quoting agrees
    with wins (:func:`_stray_quotes`), and a finding ``delimiter`` says which was chosen and how to override it."""
    stats = {}
    for d in dict.fromkeys([*([chosen] if chosen else []), *_DELIMITERS]):
        rows = _sample_rows(text, d)
        if rows:
            stats[d] = _delimiter_stats(rows)
    if chosen:
        best = chosen
    else:
        wide = [d for d in _DELIMITERS if d in stats and stats[d][0] >= 2]
        sample = text[:_SAMPLE_CHARS]
        stray = {d: _stray_quotes(sample, d) for d in wide}
        best = max(wide, key=lambda d: (round(stats[d][1], 2), -stray[d], stats[d][0]), default=",")
        parsing = [d for d in wide if stats[d][1] >= 0.9]  # header and rows agree at this delimiter too
        if best in parsing and len(parsing) > 1:
            # among the delimiters that parse, the quoting decides before the share of agreeing rows does
            best = min(parsing, key=lambda d: (stray[d], -round(stats[d][1], 2), -stats[d][0]))
            others = [d for d in parsing if d != best]
            why = (f"the quoted fields contain {' and '.join(delimiter_name(d) + 's' for d in others)}, so only "
                   f"{delimiter_name(best)}s separate fields" if any(stray[d] > stray[best] for d in others) else
                   f"{delimiter_name(best)}s give the most consistent rows")
            if findings is not None:
                findings.append(Finding(
                    "delimiter", f"the file splits into columns at {delimiter_name(best)}s ({stats[best][0]} columns) "
                    f"and also at {', '.join(f'{delimiter_name(d)}s ({stats[d][0]} columns)' for d in others)}; the "
                    f"{delimiter_name(best)} was chosen because {why}. To read it otherwise, choose the delimiter under 'How to read this "
                    "file'", severity="info"))
    if best not in stats:
        return best
    header, agree, width, _ = stats[best]
    if agree >= 0.5:
        return best
    others = [d for d in _DELIMITERS if d != best and d in stats and stats[d][2] >= 2 and stats[d][3] >= 0.9]
    if others:
        o = others[0]
        raise DataError(f"the header has {header} column(s) when split at {delimiter_name(best)}s, but the rows have "
                        f"{stats[o][2]} fields split at {delimiter_name(o)}s: the header and the rows use different "
                        "delimiters. Make them the same (re-save the file) and upload it again")
    if width != header:
        raise DataError(f"with the {delimiter_name(best)} delimiter the header has {header} column(s) but most rows "
                        f"have {width} field(s); check the delimiter (choose it under 'How to read this file') and the "
                        "quoting")
    return best


def read_header(text: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(text[:_HEADER_CHARS], newline=""), delimiter=delimiter), [])
    except csv.Error as exc:
        raise DataError(f"the header row cannot be read ({short_error(exc, 120)}); check the quoting of the column "
                        "names") from None


def read_frame(text: str, delimiter: str, names: list[str], **kw) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), sep=delimiter, header=0, names=names or None, index_col=False,
                       engine="c", **kw)


def parse_csv(text: str, delimiter: str, names: list[str], decimal, thousands) -> pd.DataFrame:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            # index_col=False: never turn surplus leading fields into an index (pandas' default does, silently)
            frame = read_frame(text, delimiter, names, decimal=decimal or ".", thousands=thousands or None,
                                low_memory=False, on_bad_lines="error")
    except pd.errors.EmptyDataError:
        raise DataError("the file holds no table") from None
    except (pd.errors.ParserError, ValueError, csv.Error, UnicodeError) as exc:
        msg = " ".join(str(exc).split())[:300]
        raise DataError(f"the CSV cannot be read ({msg}); check the delimiter and quoting") from None
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        _check_surplus_fields(text, delimiter, len(names))
    return frame


def _check_surplus_fields(text: str, delimiter: str, width: int) -> None:
    """Rows longer than the header are an error unless the surplus fields are empty (trailing delimiters)."""
    try:
        for line_no, row in enumerate(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), start=1):
            if len(row) > width and any(f.strip() for f in row[width:]):
                raise DataError(f"the CSV cannot be read: line {line_no} has {len(row)} fields but the header has "
                                f"{width}; check the delimiter and quoting")
    except csv.Error as exc:
        raise DataError(f"the CSV cannot be read ({short_error(exc, 120)}); check the delimiter and quoting") \
            from None
