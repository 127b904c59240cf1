"""Data intake: read an uploaded CSV or Parquet table and say what is wrong or risky about it.

:func:`read_table` refuses what cannot be used (not a table, too large, too many columns, duplicate column names,
no rows, a header and rows split by different delimiters) with a :class:`tcrex.errors.DataError`, and returns everything
else as a :class:`TableReport`: the DataFrame plus findings (missing values per column, constant columns,
identifier-like columns, high-cardinality categories, mixed-type columns, a single column, a truncated last line).
Tables keep their data or say why: every guess (encoding, delimiter, decimal comma, thousands separator) and
every value not read as written (bytes that are not UTF-8, codes with leading zeros and integers beyond 2**53
kept as text) is a finding; the guesses can be overridden (``delimiter=``, ``decimal=``, ``thousands=``,
``encoding=``). Missing values are handled only by :func:`handle_missing` with the strategy the user picked,
and its message says what it did. See docs/security.md, "Tables".
"""
from __future__ import annotations

import codecs
import csv
import io
import json
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePath

import numpy as np
import pandas as pd

from ..errors import DataError, ParameterError, TCRExError
from .. import is_categorical_column
from ..text import format_value
from ._base import short_error

__all__ = ["read_table", "TableReport", "Finding", "handle_missing", "target_findings",
           "MAX_TABLE_BYTES", "MAX_COLUMNS", "ENCODINGS", "DECIMALS", "THOUSANDS"]

MB = 1024 * 1024
MAX_TABLE_BYTES = 200 * MB
MAX_COLUMNS = 2000
PARQUET_UNPACK_FACTOR = 10  # a Parquet file may decompress to at most this many times max_bytes
HIGH_CARDINALITY = 50  # categorical columns with more distinct values than this are flagged
_DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_ID_NAME = re.compile(r"(^|[_\s-])(id|uuid|guid|key|index)$|^unnamed: ?\d+$", re.IGNORECASE)


@dataclass
class Finding:
    kind: str  # missing, constant, id_like, high_cardinality, mixed_types, single_column, truncated, ...
    message: str
    column: str | None = None
    severity: str = "warning"  # "warning" (the user should act) or "info"
    count: int | None = None

    def __str__(self) -> str:
        return self.message


@dataclass
class TableReport:
    frame: pd.DataFrame
    format: str  # "csv" or "parquet"
    encoding: str | None = None
    delimiter: str | None = None
    decimal: str | None = None
    thousands: str | None = None  # "" when no thousands separator was used
    findings: list = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    @property
    def n_columns(self) -> int:
        return self.frame.shape[1]

    @property
    def missing(self) -> dict:
        """Column -> number of missing values (only columns that have some)."""
        return {f.column: f.count for f in self.findings if f.kind == "missing"}

    def columns_of(self, kind: str) -> list:
        return [f.column for f in self.findings if f.kind == kind]

    @property
    def constant_columns(self) -> list:
        return self.columns_of("constant")

    @property
    def id_like_columns(self) -> list:
        return self.columns_of("id_like")

    @property
    def high_cardinality_columns(self) -> list:
        return self.columns_of("high_cardinality")

    @property
    def mixed_type_columns(self) -> list:
        return self.columns_of("mixed_types")

    @property
    def single_column(self) -> bool:
        return any(f.kind == "single_column" for f in self.findings)

    @property
    def messages(self) -> list[str]:
        return [f.message for f in self.findings]


# ---------------------------------------------------------------------------------------------- reading
#: Encodings offered as an override (``read_table(..., encoding=)``): codec name -> description.
ENCODINGS = {"utf-8": "UTF-8", "cp1252": "Windows-1252 (Western European)", "latin-1": "Latin-1 (ISO-8859-1)",
             "utf-16": "UTF-16 (with byte-order mark)", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE",
             "utf-32": "UTF-32 (with byte-order mark)", "utf-32-le": "UTF-32 LE", "utf-32-be": "UTF-32 BE"}
#: Decimal marks and thousands separators offered as overrides ("" = no thousands separator).
DECIMALS = {".": "point (1.5)", ",": "comma (1,5)"}
THOUSANDS = {"": "none", ",": "comma (1,234)", ".": "point (1.234)", " ": "space (1 234)", "'": "apostrophe (1'234)"}
#: Integers whose magnitude exceeds this cannot all be held exactly as float64 (2**53 + 1 == 2**53 as a float).
EXACT_INTEGER = 2 ** 53
_SAMPLE_CHARS = 200_000
_HEADER_CHARS = 8_000_000


def read_table(data: bytes, filename: str, *, delimiter: str | None = None, decimal: str | None = None,
               thousands: str | None = None, encoding: str | None = None, max_columns: int = MAX_COLUMNS,
               max_bytes: int = MAX_TABLE_BYTES, high_cardinality: int = HIGH_CARDINALITY) -> TableReport:
    """Read CSV or Parquet bytes; see the module docstring.

    ``delimiter``, ``decimal``, ``thousands`` (``""``: none) and ``encoding`` override what is detected in a CSV
    (``None``: detect). Every problem is a :class:`tcrex.errors.DataError` (or a ``ParameterError`` for a bad override);
    any other exception from the parsing libraries is turned into a ``DataError`` too (defence in depth: the causes
    known are handled where they arise, with their own messages)."""
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise DataError(f"read_table needs the file's bytes, got {type(data).__name__}")
    _check_overrides(delimiter, decimal, thousands, encoding)
    try:
        return _read_table(data, filename, delimiter, decimal, thousands, encoding, max_columns, max_bytes,
                           high_cardinality)
    except TCRExError:
        raise
    except MemoryError:
        raise DataError(f"{filename!r} needs more memory to read than this server allows; upload a smaller "
                        "table") from None
    except RecursionError:
        raise DataError(f"{filename!r} is nested too deeply to be read as a table") from None
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a library error is never shown raw
        raise DataError(f"{filename!r} could not be read: an unexpected {type(exc).__name__} in the table reader "
                        f"({short_error(exc, 200)}); check that it is a CSV or Parquet table (and please report "
                        "the file: this case should have its own message)") from None


def _check_overrides(delimiter, decimal, thousands, encoding) -> None:
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\"\r\n"
                                  or delimiter.isalnum()):
        raise ParameterError(f"delimiter must be one character that is not a letter, digit, quote or line break, "
                             f"got {delimiter!r}")
    if decimal is not None and decimal not in DECIMALS:
        raise ParameterError(f"decimal must be one of {list(DECIMALS)}, got {decimal!r}")
    if thousands is not None and thousands not in THOUSANDS:
        raise ParameterError(f"thousands must be one of {list(THOUSANDS)}, got {thousands!r}")
    if decimal is not None and thousands and decimal == thousands:
        raise ParameterError(f"the decimal mark and the thousands separator cannot both be {decimal!r}")
    if delimiter is not None and delimiter in (decimal, thousands):
        raise ParameterError(f"the delimiter {delimiter!r} cannot also be the decimal mark or thousands separator")
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except (LookupError, TypeError):
            raise ParameterError(f"unknown encoding {encoding!r}; use one of {list(ENCODINGS)}") from None


def _read_table(data, filename, delimiter, decimal, thousands, encoding, max_columns, max_bytes,
                high_cardinality) -> TableReport:
    if not data:
        raise DataError(f"{filename!r} is empty")
    if len(data) > max_bytes:
        raise DataError(f"{filename!r} is {_mb(len(data))}; the limit is {_mb(max_bytes)}")
    ext = PurePath(filename or "").suffix.lower()
    if data[:4] == b"PAR1" or ext in (".parquet", ".pq"):
        report = _read_parquet(data, filename, max_columns, max_bytes)
    elif ext in (".xlsx", ".xls", ".xlsm", ".ods") or data[:4] == b"PK\x03\x04":
        raise DataError(f"{filename!r} is a spreadsheet or archive, not a CSV; save it as CSV (UTF-8) or Parquet")
    else:
        report = _read_csv(data, filename, max_columns, delimiter, decimal, thousands, encoding)
    _check_frame(report, high_cardinality)
    return report


# ------------------------------------------------------------------ encodings
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32", "UTF-32 LE"),
         (b"\x00\x00\xfe\xff", "utf-32", "UTF-32 BE"), (b"\xff\xfe", "utf-16", "UTF-16 LE"),
         (b"\xfe\xff", "utf-16", "UTF-16 BE"))


def _line_of(text: str, pos: int) -> int:
    head = text[:pos]
    return head.count("\n") + head.count("\r") - head.count("\r\n") + 1


def _wide_encoding(sample: bytes) -> str | None:
    """UTF-16/UTF-32 without a byte-order mark, recognised by where the NUL bytes fall (text that is mostly ASCII
    has a NUL in every other byte, or three of every four)."""
    n = len(sample) // 4 * 4
    if n < 8:
        return None
    quad = (np.frombuffer(sample[:n], dtype=np.uint8).reshape(-1, 4) == 0).mean(axis=0)  # NUL share per position
    pair = (quad[0] + quad[2]) / 2, (quad[1] + quad[3]) / 2
    if quad[2] > 0.9 and quad[3] > 0.9 and quad[1] > 0.5 and quad[0] < 0.25:
        return "utf-32-le"
    if quad[0] > 0.9 and quad[1] > 0.9 and quad[2] > 0.5 and quad[3] < 0.25:
        return "utf-32-be"
    if pair[1] > 0.6 and pair[0] < 0.25:
        return "utf-16-le"
    if pair[0] > 0.6 and pair[1] < 0.25:
        return "utf-16-be"
    return None


_WIDE_LABELS = {"utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE", "utf-32-le": "UTF-32 LE",
                "utf-32-be": "UTF-32 BE"}


def _decode_strict(data: bytes, codec: str, label: str, chosen: bool = False) -> str:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        what = "is not" if chosen else f"looks like {label} but is not"
        raise DataError(f"the file {what} valid {label} (at byte {exc.start:,}): re-save it as UTF-8, or choose "
                        "its encoding under 'How to read this file'") from None
    return text[1:] if text.startswith("\ufeff") else text


def _decode(data: bytes, encoding: str | None = None) -> tuple[str, str, list]:
    """``(text, encoding, findings)``. Never silent: a file that is not UTF-8 is named as what it was read as, and
    bad bytes in a UTF-8 file are replaced by U+FFFD with their lines said (the whole file is never re-decoded as
    Latin-1 because of them). ``encoding`` overrides the detection."""
    if encoding is not None:
        label = ENCODINGS.get(encoding, encoding)
        chosen = Finding("encoding", f"read as {label}, as chosen", severity="info")
        if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig"):
            text, name, found = _decode_utf8(data[3:] if data.startswith(b"\xef\xbb\xbf") else data, encoding)
            return text, name, [chosen, *found]
        return _decode_strict(data, encoding, label, chosen=True), encoding, [chosen]
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            if codec == "utf-8-sig":
                return _decode_utf8(data[len(bom):], "utf-8-sig")
            return _decode_strict(data, codec, label), codec, []
    wide = _wide_encoding(data[:65536])
    if wide:
        label = _WIDE_LABELS[wide]
        return _decode_strict(data, wide, label), wide, [
            Finding("encoding", f"the file is {label} without a byte-order mark; it was read as {label}",
                    severity="info")]
    if b"\x00" in data[:65536]:
        raise DataError("the file is not text (it contains NUL bytes): upload a CSV or a Parquet file (a UTF-16 or "
                        "UTF-32 text file that is not recognised: choose its encoding under 'How to read this file')")
    try:
        return data.decode("utf-8"), "utf-8", []
    except UnicodeDecodeError:
        pass
    escaped = data.decode("utf-8", errors="surrogateescape")  # each invalid byte -> one lone surrogate
    if re.search("[^\x00-\x7f\udc80-\udcff]", escaped):
        return _decode_utf8(data, "utf-8", escaped)  # valid multi-byte sequences: UTF-8 with a few bad bytes
    # not UTF-8 at all (no valid multi-byte sequence anywhere): a single-byte Windows or Latin-1 file
    if not re.search(b"[\x80-\x9f]", data):
        codec = "latin-1"  # latin-1 and cp1252 agree on every byte of this file
    elif re.search(b"[\x81\x8d\x8f\x90\x9d]", data):
        codec = "latin-1"  # bytes cp1252 leaves undefined
    else:
        codec = "cp1252"
    text = data.decode(codec)
    first = re.search("[^\x00-\x7f]", text)
    line = _line_of(text, first.start()) if first else 1
    return text, codec, [Finding("encoding", f"the file is not UTF-8: it was read as {ENCODINGS[codec]} (its first "
                                 f"non-ASCII character is on line {line}); if accented letters look wrong, choose "
                                 "the encoding under 'How to read this file'", severity="info")]


def _decode_utf8(data: bytes, name: str, escaped: str | None = None) -> tuple[str, str, list]:
    if escaped is None:
        try:
            return data.decode("utf-8"), name, []
        except UnicodeDecodeError:
            escaped = data.decode("utf-8", errors="surrogateescape")
    n_bad, lines, line, last = 0, [], 1, 0
    for m in re.finditer("[\udc80-\udcff]", escaped):
        n_bad += 1
        if len(lines) < 10:
            seg = escaped[last:m.start()]
            line += seg.count("\n") + seg.count("\r") - seg.count("\r\n")
            last = m.start()
            if not lines or lines[-1] != line:
                lines.append(line)
    text = escaped.translate({c: "\ufffd" for c in range(0xDC80, 0xDD00)})
    shown = ", ".join(map(str, lines)) + (", …" if len(lines) >= 10 else "")
    return text, name, [Finding("encoding", f"{n_bad:,} byte(s) are not valid UTF-8 (on line(s) {shown}); each was "
                                "replaced by '\ufffd'. The rest of the file is UTF-8, so it was not re-read in "
                                "another encoding — fix those lines, or choose the file's encoding under 'How to "
                                "read this file'", count=n_bad)]


def _looks_binary(text: str) -> bool:
    sample = text[:20000]
    if not sample:
        return False
    controls = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\r\n\t") or 0x7F <= ord(ch) <= 0x9F)
    return controls / len(sample) > 0.05


# ------------------------------------------------------------------ delimiter and header
_SEP_LINE = re.compile(r'sep=(.)[ \t]*(\r\n|\r|\n)')


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


def _name(d: str) -> str:
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


def _choose_delimiter(text: str, chosen: str | None, findings: list | None = None) -> str:
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
            why = (f"the quoted fields contain {' and '.join(_name(d) + 's' for d in others)}, so only "
                   f"{_name(best)}s separate fields" if any(stray[d] > stray[best] for d in others) else
                   f"{_name(best)}s give the most consistent rows")
            if findings is not None:
                findings.append(Finding(
                    "delimiter", f"the file splits into columns at {_name(best)}s ({stats[best][0]} columns) and also "
                    f"at {', '.join(f'{_name(d)}s ({stats[d][0]} columns)' for d in others)}; the {_name(best)} was "
                    f"chosen because {why}. To read it otherwise, choose the delimiter under 'How to read this "
                    "file'", severity="info"))
    if best not in stats:
        return best
    header, agree, width, _ = stats[best]
    if agree >= 0.5:
        return best
    others = [d for d in _DELIMITERS if d != best and d in stats and stats[d][2] >= 2 and stats[d][3] >= 0.9]
    if others:
        o = others[0]
        raise DataError(f"the header has {header} column(s) when split at {_name(best)}s, but the rows have "
                        f"{stats[o][2]} fields split at {_name(o)}s: the header and the rows use different "
                        "delimiters. Make them the same (re-save the file) and upload it again")
    if width != header:
        raise DataError(f"with the {_name(best)} delimiter the header has {header} column(s) but most rows have "
                        f"{width} field(s); check the delimiter (choose it under 'How to read this file') and the "
                        "quoting")
    return best


def _read_header(text: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(text[:_HEADER_CHARS], newline=""), delimiter=delimiter), [])
    except csv.Error as exc:
        raise DataError(f"the header row cannot be read ({short_error(exc, 120)}); check the quoting of the column "
                        "names") from None


def _read_csv(data: bytes, filename: str, max_columns: int, delimiter=None, decimal=None, thousands=None,
              encoding=None) -> TableReport:
    text, encoding, findings = _decode(data, encoding)
    if _looks_binary(text):
        raise DataError(f"{filename!r} does not look like a CSV file (binary content); upload a CSV or Parquet file")
    if not text.strip():
        raise DataError(f"{filename!r} holds no data")
    sep_line = _SEP_LINE.match(text)
    if sep_line:  # Excel's "sep=;" first line names the delimiter
        text = text[sep_line.end():]
        named = sep_line.group(1)
        used = delimiter or named
        findings.append(Finding("sep_line", f"the first line 'sep={named}' (written by Excel) names the delimiter "
                                f"({_name(named)}); " + ("it was used and skipped" if used == named else
                                                         f"it was skipped, and the {_name(used)} you chose was used"),
                                severity="info"))
        delimiter = used
    delimiter = _choose_delimiter(text, delimiter, findings)
    header = _read_header(text, delimiter)
    if len(header) > max_columns:
        raise DataError(f"the table has {len(header)} columns; at most {max_columns} are accepted (T-CREx rules "
                        "over thousands of features are unreadable — select the features to explain first)")
    names = [" ".join(h.split()) or f"Unnamed: {i}" for i, h in enumerate(header)]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        shown = [d if d else "(empty name)" for d in dup[:10]]
        raise DataError(f"duplicate column name(s) {shown}; every column needs a unique name — rename them")
    if [n for n in names if not n.startswith("Unnamed: ")] != [h for h in header if h.strip()]:
        how = "line breaks inside column names were replaced by spaces" if any(
            "\n" in h or "\r" in h for h in header) else "spaces around column names were removed"
        findings.append(Finding("renamed", how, severity="info"))
    frame = _parse_csv(text, delimiter, names, decimal, thousands)
    if len(frame) == 0:
        raise DataError(f"{filename!r} has a header but no data rows")
    report = TableReport(frame=frame, format="csv", encoding=encoding, delimiter=delimiter, findings=findings)
    _numbers(report, text, names, decimal, thousands)
    _exact_values(report, text, names)
    stripped = text.rstrip("\r\n")
    last = stripped[max(stripped.rfind("\n"), stripped.rfind("\r")) + 1:]
    if not text.endswith(("\n", "\r")):
        try:
            fields = next(csv.reader(io.StringIO(last, newline=""), delimiter=delimiter), [])
        except csv.Error:  # the last line starts inside a quoted field: its count says nothing
            fields = header
        if len(fields) < len(header):
            report.findings.append(Finding("truncated", "the last line has fewer fields than the header: the file "
                                           "looks truncated (its last row is incomplete)", count=1))
    return report


def _read_frame(text: str, delimiter: str, names: list[str], **kw) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), sep=delimiter, header=0, names=names or None, index_col=False,
                       engine="c", **kw)


def _parse_csv(text: str, delimiter: str, names: list[str], decimal, thousands) -> pd.DataFrame:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            # index_col=False: never turn surplus leading fields into an index (pandas' default does, silently)
            frame = _read_frame(text, delimiter, names, decimal=decimal or ".", thousands=thousands or None,
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


# ------------------------------------------------------------------ numbers written with separators
#: (decimal, thousands) -> how a number is written that way; grouping must be exact (1.234.567, never 1.5 as 15).
_E = r"([eE][+-]?\d+)?"  # an exponent, as spreadsheets and pandas write very small or large numbers
_STYLES = {
    (",", ""): re.compile(rf"\s*[+-]?(\d+(,\d*)?|,\d+){_E}\s*"),
    (",", "."): re.compile(rf"\s*[+-]?(\d{{1,3}}(\.\d{{3}})+|\d+)(,\d+)?{_E}\s*"),
    (",", " "): re.compile(rf"\s*[+-]?(\d{{1,3}}( \d{{3}})+|\d+)(,\d+)?{_E}\s*"),
    (".", ","): re.compile(rf"\s*[+-]?(\d{{1,3}}(,\d{{3}})+|\d+)(\.\d+)?{_E}\s*"),
    (".", " "): re.compile(rf"\s*[+-]?(\d{{1,3}}( \d{{3}})+|\d+)(\.\d+)?{_E}\s*"),
    (".", "'"): re.compile(rf"\s*[+-]?(\d{{1,3}}('\d{{3}})+|\d+)(\.\d+)?{_E}\s*"),
}
_AMBIGUOUS_COMMA = re.compile(r"\s*[+-]?\d{1,3},\d{3}\s*")  # 1,234: 1.234 or 1234?
_CODE = re.compile(r"\s*[+-]?0\d")  # 007, 07, -01: a code, not a number


def _style_of(values: pd.Series, style: tuple[str, str]) -> bool:
    """Every value (distinct texts) is a number written in ``style`` and at least one uses its separators."""
    values = values.astype(object)
    if not values.str.fullmatch(_STYLES[style].pattern).all():
        return False
    seps = [s for s in style if s and s != "."] + (["."] if style[1] == "." else [])
    return any(bool(values.str.contains(s, regex=False).any()) for s in seps)


def _convert(s: pd.Series, style: tuple[str, str]) -> pd.Series:
    dec, thou = style
    text = s.astype(object).str.strip()
    if thou:
        text = text.str.replace(thou, "", regex=False)
    if dec == ",":
        text = text.str.replace(",", ".", regex=False)
    return pd.to_numeric(text, errors="raise")


def _numbers(report: TableReport, text: str, names: list[str], decimal, thousands) -> None:
    """Text columns that are numbers written with a decimal comma or thousands separators become numbers, and
    the report says which separators were assumed (and where ``1,234`` could be read either way)."""
    frame, f = report.frame, report.findings
    if decimal is not None or thousands is not None:
        report.decimal, report.thousands = decimal or ".", thousands or ""
        f.append(Finding("separators", f"numbers read with the decimal mark {report.decimal!r}"
                         + (f" and the thousands separator {report.thousands!r}" if report.thousands else "")
                         + ", as chosen", severity="info"))
        return
    report.decimal, report.thousands = ".", ""
    text_cols = [c for c in frame.columns if _is_text(frame[c])]
    candidates, samples = {}, {}
    for c in text_cols:
        distinct = pd.Series(frame[c].dropna().unique()[:5000]).astype(object).astype(str)
        if distinct.empty or distinct.str.match(_CODE.pattern).any():
            continue
        styles = [s for s in _STYLES if _style_of(distinct, s)]
        if styles:
            candidates[c], samples[c] = styles, distinct
    if not candidates:
        return
    order = [(".", ","), (",", ""), (",", "."), (",", " "), (".", " "), (".", "'")] if report.delimiter == "," \
        else [(",", ""), (",", "."), (",", " "), (".", ","), (".", " "), (".", "'")]
    style = max(order, key=lambda s: (sum(s in v for v in candidates.values()), -order.index(s)))
    dec, thou = style
    chosen = [c for c, styles in candidates.items() if style in styles]
    # without a thousands separator pandas' own parser is strict (1,2,3 stays text) and fast: re-read with it;
    # with one, pandas would accept any grouping (1.5 as 15), so every distinct value is checked here
    fast = not thou and dec != report.delimiter
    parsed = _read_frame(text, report.delimiter, names, usecols=chosen, decimal=dec, low_memory=False) if fast \
        else None
    converted, ambiguous = [], []
    for c in chosen:
        if fast:
            if not pd.api.types.is_numeric_dtype(parsed[c]) or pd.api.types.is_bool_dtype(parsed[c]):
                continue  # the sample agreed, the whole column does not
            frame[c] = parsed[c].to_numpy()
        else:
            if not _style_of(pd.Series(frame[c].dropna().unique()).astype(object).astype(str), style):
                continue
            frame[c] = _convert(frame[c], style)
        converted.append(c)
        if "," in style:
            with_comma = samples[c][samples[c].str.contains(",", regex=False)]
            if len(with_comma) and with_comma.str.fullmatch(_AMBIGUOUS_COMMA.pattern).all():
                ambiguous.append((c, with_comma.iloc[0].strip()))
    if not converted:
        return
    report.decimal, report.thousands = style
    words = (f"a decimal {DECIMALS[dec].split()[0]}" + (f" and {THOUSANDS[thou].split()[0]}s between thousands"
                                                          if thou else ""))
    f.append(Finding("separators", f"numbers written with {words} were read as numbers in {_listing(converted)}; "
                     "if that is wrong, choose the separators under 'How to read this file'", severity="info"))
    for c, example in ambiguous:
        as_dec, as_thou = example.replace(",", "."), example.replace(",", "")
        read = as_dec if dec == "," else as_thou
        f.append(Finding("ambiguous_separator", f"{c!r}: values such as {example!r} could be {as_dec} (decimal "
                         f"comma) or {as_thou} (thousands separator); they were read as {read} — if that is wrong, "
                         "choose the separators under 'How to read this file'", c))
    if dec == ",":
        dotted = [c for c in frame.columns if c not in converted and pd.api.types.is_float_dtype(frame[c])
                  and not (frame[c].dropna() == frame[c].dropna().round()).all()]
        if dotted:
            f.append(Finding("ambiguous_separator", f"{_listing(dotted)} {'was' if len(dotted) == 1 else 'were'} "
                             "read with '.' as the decimal point "
                             "although other columns use a decimal comma; if '.' separates thousands there, choose "
                             "the separators under 'How to read this file'", dotted[0]))


def _listing(cols: list) -> str:
    shown = ", ".join(repr(c) for c in cols[:8])
    return (f"column {shown}" if len(cols) == 1 else f"columns {shown}") + (" …" if len(cols) > 8 else "")


# ------------------------------------------------------------------ values that must stay exact
def _exact_values(report: TableReport, text: str, names: list[str]) -> None:
    """Numeric columns that are really codes (a value with a leading zero: 007, 07 and 7 are different codes) or
    that hold integers beyond 2**53 (which float64, and so the engine, cannot tell apart) are re-read as text,
    exactly as written, and the report says so."""
    frame, delimiter = report.frame, report.delimiter
    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])
               and not pd.api.types.is_bool_dtype(frame[c])]
    # pandas keeps integers beyond 64 bits as Python ints in an object column: exact, but not text
    huge = [c for c in frame.columns if pd.api.types.is_object_dtype(frame[c])
            and pd.api.types.infer_dtype(frame[c], skipna=True) in ("integer", "mixed-integer")]
    numeric += huge
    if not numeric:
        return
    big = {c for c in numeric if c in huge or (pd.api.types.is_integer_dtype(frame[c])
                                               and ((frame[c] > EXACT_INTEGER) | (frame[c] < -EXACT_INTEGER)).any())}
    d = re.escape(delimiter)
    # a whole field of digits starting with 0 (007, 0042.5) somewhere in the data: only then are the numeric
    # columns' texts looked at (in chunks); float columns of whole numbers reaching 2**53 likewise
    zero_hint = re.search(rf'[\r\n"{d}][ \t]*[+-]?0\d+(?:\.\d*)?[ \t]*(?:[\r\n"{d}]|\Z)', text)
    maybe_big = []
    for c in numeric:
        if c not in big and pd.api.types.is_float_dtype(frame[c]):
            v = frame[c].to_numpy(dtype=float, na_value=np.nan)
            v = v[np.isfinite(v)]
            if len(v) and (np.abs(v) >= EXACT_INTEGER).any() and (v == np.round(v)).all():
                maybe_big.append(c)
    look = numeric if zero_hint else maybe_big
    codes: dict = {}
    if look:
        all_int = dict.fromkeys(maybe_big, True)
        has_big: set = set()
        with _read_frame(text, delimiter, names, usecols=look, dtype=str, chunksize=200_000) as chunks:
            for chunk in chunks:
                for c in look:
                    s = chunk[c].dropna()
                    if zero_hint and c not in codes:
                        hit = s[s.str.match(r"\s*[+-]?0\d")]
                        if len(hit):
                            codes[c] = hit.iloc[0].strip()
                    if all_int.get(c):
                        all_int[c] = bool(s.str.fullmatch(r"\s*[+-]?\d+\s*").all())
                        ints = s[s.str.fullmatch(r"\s*[+-]?\d{16,}\s*")]
                        if len(ints) and ints.map(lambda v: abs(int(v)) > EXACT_INTEGER).any():
                            has_big.add(c)
        big |= {c for c in has_big if all_int[c]}
    keep = [c for c in numeric if c in codes or c in big]
    if not keep:
        return
    raw = _read_frame(text, delimiter, names, usecols=keep, dtype=str, low_memory=False)
    for c in keep:
        frame[c] = raw[c].to_numpy()
    for c in keep:
        if c in codes:
            report.findings.append(Finding("kept_as_text", f"{c!r} holds values with leading zeros (such as "
                                           f"{codes[c]!r}); as numbers 007, 07 and 7 would all become 7, so the "
                                           "column was kept as text (codes), exactly as written — set it to "
                                           "numeric in the column table if the zeros do not matter", c,
                                           severity="info"))
        else:
            report.findings.append(Finding("kept_as_text", _big_message(c), c, severity="info"))


def _big_message(col) -> str:
    return (f"{col!r} holds integers beyond 2^53 (9,007,199,254,740,992), which cannot all be told apart as "
            "floating-point numbers; the column was kept as text, exactly as written (codes or identifiers?)")


# ------------------------------------------------------------------ Parquet
def _mb(n: float) -> str:
    if n < MB:
        return f"{n / 1024:,.0f} KB"
    return f"{n / MB:,.1f} MB" if n < 10 * MB else f"{n / MB:,.0f} MB"


def _parquet_estimate(meta, schema, pa) -> int:
    """Bytes the table would take once read, from the metadata alone (rows × width for fixed-width types; the
    declared uncompressed size plus per-value overhead for text and binary)."""
    total = 0
    for j, fld in enumerate(schema):
        t = fld.type
        if pa.types.is_dictionary(t):
            t = t.index_type
        try:
            width = max(1, t.bit_width // 8)
        except ValueError:  # variable width
            width = None
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            if width is not None:
                total += rg.num_rows * width
            else:
                total += rg.num_rows * 16 + (rg.column(j).total_uncompressed_size if j < rg.num_columns else 0)
    return total


def _read_parquet(data: bytes, filename: str, max_columns: int, max_bytes: int) -> TableReport:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a requirement
        raise DataError("pyarrow is not installed; Parquet files cannot be read") from None
    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        meta = pf.metadata
        schema = pf.schema_arrow
    except Exception as exc:  # noqa: BLE001 - ArrowInvalid, OSError, ... on damaged files
        raise DataError(f"{filename!r} is not a valid Parquet file (truncated or damaged?): "
                        f"{' '.join(str(exc).split())[:200]}") from None
    names = list(schema.names)
    if len(names) > max_columns:
        raise DataError(f"the table has {len(names)} columns; at most {max_columns} are accepted (T-CREx rules "
                        "over thousands of features are unreadable — select the features to explain first)")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DataError(f"duplicate column name(s) {dup[:10]}; every column needs a unique name — rename them")
    nested = [f.name for f in schema if pa.types.is_nested(f.type)]
    if nested:
        raise DataError(f"column(s) {nested[:10]} hold nested values (lists/structs/maps); flatten them first")
    damaged = f"{filename!r} is not a valid Parquet file (its metadata is inconsistent: damaged or edited?)"
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    if meta.num_rows < 0 or any(g.num_rows < 0 for g in groups) or sum(g.num_rows for g in groups) != meta.num_rows:
        raise DataError(damaged)
    budget = PARQUET_UNPACK_FACTOR * max_bytes
    unpacked = sum(g.total_byte_size for g in groups)
    estimate = _parquet_estimate(meta, schema, pa)
    if max(unpacked, estimate) > budget:
        raise DataError(f"{filename!r} declares {meta.num_rows:,} rows × {len(names)} columns, about "
                        f"{_mb(max(unpacked, estimate))} once read; the limit is {_mb(budget)} "
                        f"({PARQUET_UNPACK_FACTOR} × the {_mb(max_bytes)} file limit) — upload fewer rows")
    try:
        parts, used = [], 0
        for i in range(meta.num_row_groups):  # row group by row group: what is really decoded is counted too
            part = pf.read_row_group(i)
            used += part.nbytes
            if used > budget:
                raise DataError(f"{filename!r} unpacks to more than {_mb(budget)} (its metadata "
                                "understates its size); upload fewer rows")
            parts.append(part)
        table = pa.concat_tables(parts) if parts else schema.empty_table()
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"{filename!r} could not be read as Parquet: {' '.join(str(exc).split())[:200]}") from None
    findings: list = []
    table = _parquet_text_and_integers(table, findings, pa)
    frame = _parquet_to_pandas(table, findings)
    if not isinstance(frame.index, pd.RangeIndex) and frame.index.name is not None:
        frame = frame.reset_index()  # an index saved by pandas comes back as a column
    frame.columns = [str(c) for c in frame.columns]
    if len(frame) == 0:
        raise DataError(f"{filename!r} has no rows")
    return TableReport(frame=frame, format="parquet", findings=findings)


def _parquet_to_pandas(table, findings: list) -> pd.DataFrame:
    """The table as a DataFrame; pandas' own metadata in the file (index, column types) is used when it is intact
    and ignored, with a finding, when it is damaged (not UTF-8 JSON, or describing columns that are not there)."""
    meta = table.schema.metadata or {}
    if b"pandas" in meta:
        try:
            json.loads(meta[b"pandas"].decode("utf-8"))
            return table.to_pandas()
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError):
            findings.append(Finding("metadata", "the file's pandas metadata (index and column types written by "
                                    "pandas) is damaged; it was ignored and the columns read as Arrow stores them"))
            table = table.replace_schema_metadata({k: v for k, v in meta.items() if k != b"pandas"})
    return table.to_pandas()


def _parquet_text_and_integers(table, findings: list, pa):
    """Binary columns become text (bytes that are not UTF-8 replaced by U+FFFD, and said); text columns holding
    invalid UTF-8 likewise; integer columns beyond 2**53 become exact text."""
    import pyarrow.compute as pc

    for j, fld in enumerate(table.schema):
        col, t, name = table.column(j), fld.type, fld.name
        new = None
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            try:
                col.validate(full=True)
                continue
            except pa.ArrowInvalid:
                t = pa.binary()
                col = col.cast(pa.binary())
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
            values = col.to_pylist()
            n_bad = 0
            decoded = []
            for v in values:
                if v is None:
                    decoded.append(None)
                    continue
                try:
                    decoded.append(v.decode("utf-8"))
                except UnicodeDecodeError:
                    n_bad += 1
                    decoded.append(v.decode("utf-8", errors="replace"))
            new = pa.array(decoded, pa.string())
            if n_bad:
                findings.append(Finding("encoding", f"{name!r}: {n_bad:,} value(s) are not valid UTF-8 text; the bad "
                                        "bytes were replaced by '\ufffd' and the column is read as text", name,
                                        count=n_bad))
            elif not (pa.types.is_string(fld.type) or pa.types.is_large_string(fld.type)):
                findings.append(Finding("binary_as_text", f"{name!r} is stored as bytes; it holds UTF-8 text and was "
                                        "read as text", name, severity="info"))
        elif pa.types.is_integer(t) and len(col) and col.null_count < len(col):
            bounds = pc.min_max(col)
            if max(abs(bounds["min"].as_py()), abs(bounds["max"].as_py())) > EXACT_INTEGER:
                new = col.cast(pa.string())
                findings.append(Finding("kept_as_text", _big_message(name), name, severity="info"))
        if new is not None:
            table = table.set_column(j, pa.field(name, new.type), new)
    return table


# ---------------------------------------------------------------------------------------------- findings
def _is_text(s: pd.Series) -> bool:
    """Holds text values (for the mixed-type and decimal-comma checks). Not the column-type rule: a bool or
    category column is categorical (``is_categorical_column``) without holding text."""
    return pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)


def _check_frame(report: TableReport, high_cardinality: int) -> None:
    df, f = report.frame, report.findings
    n = len(df)
    if df.shape[1] == 1:
        how = (f" with the {_DELIMITER_NAMES.get(report.delimiter, repr(report.delimiter))} delimiter"
               if report.format == "csv" else "")
        f.append(Finding("single_column", f"the table has a single column ({df.columns[0]!r}) when read{how}: is "
                         "the delimiter wrong? T-CREx needs features besides the model's target", df.columns[0]))
    for col in df.columns:
        s = df[col]
        n_missing = int(s.isna().sum())
        if n_missing:
            f.append(Finding("missing", f"{col!r}: {n_missing} missing value(s) of {n} rows", col, count=n_missing))
        if n_missing == n:
            f.append(Finding("empty", f"{col!r} is empty (every value is missing); drop it", col))
            continue
        n_unique = int(s.nunique(dropna=False))
        if n_unique == 1 and n > 1:
            f.append(Finding("constant", f"{col!r} has the same value ({format_value(s.dropna().iloc[0])}) in every row; it "
                             "carries no information — drop it", col))
            continue
        if _is_text(s):
            _mixed(s, col, f)
        if pd.api.types.is_float_dtype(s) and np.isinf(s.to_numpy(dtype=float, na_value=np.nan)).any():
            k = int(np.isinf(s.to_numpy(dtype=float, na_value=np.nan)).sum())
            f.append(Finding("infinite", f"{col!r}: {k} infinite value(s); T-CREx needs finite numbers", col, count=k))
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            _sentinels(s, col, f)
        if _id_like(s, col, n, n_unique):
            f.append(Finding("id_like", f"{col!r} looks like an identifier (a different value in every row); rules "
                             "about it would be meaningless — drop it", col))
        elif is_categorical_column(s) and n_unique > high_cardinality:  # one indicator per value in the engine
            f.append(Finding("high_cardinality", f"{col!r} has {n_unique} distinct values; the explainer builds one "
                             "indicator per value — consider dropping it or grouping rare values", col,
                             count=n_unique))


#: Sentinel detection: at most this many distinct codes, each in at least ``SENTINEL_MIN_ROWS`` rows; the other
#: values must be varied (``SENTINEL_MIN_OTHERS`` distinct values) and hold most rows.
SENTINEL_MAX_CODES = 4
SENTINEL_MIN_ROWS = 2
SENTINEL_MIN_OTHERS = 10


def _whole(v: float) -> bool:
    return bool(np.isfinite(v) and float(v) == int(v))


def sentinel_codes(s: pd.Series) -> tuple[list, int, str]:
    """Values of a numeric column that look like codes for "unknown" / "not applicable" rather than measurements:
    ``(codes, rows holding them, kind)`` with kind ``"negative"`` or ``"large"``, or ``([], 0, "")``.

    * **negative codes** (credit-bureau data's −7/−8/−9): a few distinct whole negative values, each repeating,
      in a column whose other values are all ≥ 0 and varied;
    * **all-nines codes** (99, 999, 9999, …): the column's largest value, repeating, more than twice the largest
      other value.

    The data is never changed; :func:`read_table` reports the finding and the user decides."""
    v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    v = v[np.isfinite(v)]
    if len(v) < 20:
        return [], 0, ""
    neg = v[v < 0]
    rest = v[v >= 0]
    if len(neg):
        codes, counts = np.unique(neg, return_counts=True)
        if (len(codes) <= SENTINEL_MAX_CODES and all(_whole(c) for c in codes) and counts.min() >= SENTINEL_MIN_ROWS
                and len(np.unique(rest)) >= SENTINEL_MIN_OTHERS and len(neg) < len(rest)):
            return [int(c) for c in codes[::-1]], int(len(neg)), "negative"
        return [], 0, ""
    top = float(v.max())
    if top >= 99 and _whole(top) and set(str(int(top))) == {"9"}:
        k = int((v == top).sum())
        others = v[v != top]
        if k >= SENTINEL_MIN_ROWS and len(np.unique(others)) >= SENTINEL_MIN_OTHERS and len(others) > k \
                and top > 2 * float(others.max()):
            return [int(top)], k, "large"
    return [], 0, ""


def sentinels_to_missing(frame: pd.DataFrame, columns) -> tuple[pd.DataFrame, dict]:
    """A copy of ``frame`` whose sentinel codes (:func:`sentinel_codes`) in ``columns`` are missing values, and
    ``{column: cells changed}``. Only on request (the dashboard's "treat sentinel codes as missing"); the caller
    then handles the missing values (:func:`handle_missing`) and reports both counts."""
    out, counts = frame, {}
    for col in columns:
        if col not in frame.columns or not pd.api.types.is_numeric_dtype(frame[col]) \
                or pd.api.types.is_bool_dtype(frame[col]):
            continue
        codes, rows, _ = sentinel_codes(frame[col])
        if not rows:
            continue
        if out is frame:
            out = frame.copy()
        hit = frame[col].isin(codes)
        out[col] = frame[col].astype("float64").mask(hit)
        counts[col] = int(hit.sum())
    return out, counts


def _sentinels(s: pd.Series, col: str, findings: list) -> None:
    codes, rows, kind = sentinel_codes(s)
    if not codes:
        return
    shown = ", ".join(str(c).replace("-", "−") for c in codes)
    where = ("negative code(s) in an otherwise non-negative column" if kind == "negative"
             else "far above every other value")
    findings.append(Finding(
        "sentinel", f"{col!r}: {rows:,} row(s) hold {shown} — {where}, typical markers for \"unknown\" or \"not "
        "applicable\" (sentinel codes). The rules would treat them as real numbers. Nothing was changed: replace "
        "them with empty cells (then drop or fill in those rows) or keep them knowingly", col, count=rows))


def _mixed(s: pd.Series, col: str, findings: list) -> None:
    values = s.dropna()
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    if pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):  # all text: no per-value type scan
        py_types = set()
    else:
        py_types = {type(v).__name__ for v in values.head(100_000)} - {"str"}
    # parse each distinct text once (a column has far fewer distinct values than rows), then count rows
    codes, distinct = pd.factorize(values.astype(str))  # distinct texts in order of appearance
    is_number = pd.to_numeric(pd.Series(distinct, dtype=object).str.strip(), errors="coerce").notna().to_numpy()
    rows = np.bincount(codes, minlength=len(distinct))
    n_num, n_text = int(rows[is_number].sum()), int(rows[~is_number].sum())
    if n_num and n_text:
        examples = [str(v) for v in np.asarray(distinct, dtype=object)[~is_number][:3]]
        findings.append(Finding("mixed_types", f"{col!r} mixes numbers ({n_num} rows) and text ({n_text} rows, e.g. "
                                f"{examples}); it is treated as categorical — fix the text values (missing-value "
                                "markers?) if it is numeric", col, count=n_text))
    elif py_types and (py_types - {"int", "float", "bool"} or len(py_types) > 1):
        findings.append(Finding("mixed_types", f"{col!r} mixes value types {sorted(py_types | {'str'})}", col))


def _id_like(s: pd.Series, col: str, n: int, n_unique: int) -> bool:
    if n < 20 or n_unique != n:
        return bool(_ID_NAME.search(str(col))) and n_unique >= 0.95 * n and n >= 20
    if pd.api.types.is_integer_dtype(s) and not pd.api.types.is_bool_dtype(s):
        v = np.sort(s.to_numpy(dtype=np.int64))
        return bool(np.all(np.diff(v) == 1)) or bool(_ID_NAME.search(str(col)))
    if _is_text(s):
        return True
    return bool(_ID_NAME.search(str(col)))


def target_findings(frame: pd.DataFrame, target: str) -> list[Finding]:
    """Problems with the chosen target column (for training in the app or a predictions column)."""
    if target not in frame.columns:
        raise DataError(f"target column {target!r} is not in the table (columns: {list(frame.columns)[:20]})")
    s = frame[target]
    out = []
    n_missing = int(s.isna().sum())
    if n_missing:
        out.append(Finding("missing", f"target {target!r}: {n_missing} missing value(s)", target, count=n_missing))
    n_unique = int(s.nunique(dropna=True))
    if n_unique <= 1:
        value = format_value(s.dropna().iloc[0]) if n_unique else "every value is missing"
        out.append(Finding("one_class", f"target {target!r} has a single value ({value}) in every row: there is no "
                           "other outcome to explain a change towards", target))
    return out


# ---------------------------------------------------------------------------------------------- choices
def handle_missing(df: pd.DataFrame, strategy: str = "error", columns=None) -> tuple[pd.DataFrame, str]:
    """Deal with missing values as the user chose, and say what was done (with counts).

    ``"error"`` raises a DataError listing the columns and counts; ``"drop"`` drops the rows with a missing value;
    ``"impute"`` fills numbers with the column median and other values with the most frequent one. ``columns``
    restricts the handling to those columns (default: all).
    """
    if strategy not in ("drop", "impute", "error"):
        raise ParameterError(f"strategy must be 'drop', 'impute' or 'error', got {strategy!r}")
    cols = list(df.columns) if columns is None else list(columns)
    unknown = [c for c in cols if c not in df.columns]
    if unknown:
        raise DataError(f"unknown column(s) {unknown}")
    counts = {c: int(df[c].isna().sum()) for c in cols}
    counts = {c: k for c, k in counts.items() if k}
    if not counts:
        return df, "no missing values"
    listing = ", ".join(f"{c!r}: {k}" for c, k in counts.items())
    if strategy == "error":
        raise DataError(f"missing values in {len(counts)} column(s) ({listing}); choose to drop those rows or to "
                        "impute them")
    if strategy == "drop":
        keep = ~df[list(counts)].isna().any(axis=1)
        n_drop = int((~keep).sum())
        if n_drop == len(df):
            raise DataError(f"dropping rows with missing values would drop all {len(df)} rows ({listing}); impute "
                            "instead or drop the mostly-empty columns")
        return df.loc[keep].copy(), f"dropped {n_drop} of {len(df)} rows with missing values ({listing})"
    out = df.copy()
    filled = []
    for c, k in counts.items():
        s = out[c]
        if s.isna().all():
            raise DataError(f"column {c!r} is entirely missing; it cannot be imputed — drop it")
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            value = s.median()
            if pd.api.types.is_integer_dtype(s.dropna()) or (s.dropna() == s.dropna().round()).all():
                value = float(np.round(value))
            how = "median"
        else:
            value = s.mode(dropna=True).iloc[0]
            how = "most frequent value"
        out[c] = s.fillna(value)
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        filled.append(f"{c!r}: {k} filled with the {how} {value!r}")
    return out, f"imputed {sum(counts.values())} missing value(s) — " + "; ".join(filled)
