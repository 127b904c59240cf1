"""Number styles: text columns that are numbers written with a decimal comma or thousands separators become
numbers (and the separators assumed are said), and numeric columns that must stay exact (codes with leading zeros,
integers beyond 2**53) are re-read as text."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ._dialects import read_frame
from ._findings import is_text
from ._report import Finding, TableReport

#: Decimal marks and thousands separators offered as overrides ("" = no thousands separator).
DECIMALS = {".": "point (1.5)", ",": "comma (1,5)"}
THOUSANDS = {"": "none", ",": "comma (1,234)", ".": "point (1.234)", " ": "space (1 234)", "'": "apostrophe (1'234)"}
#: Integers whose magnitude exceeds this cannot all be held exactly as float64 (2**53 + 1 == 2**53 as a float).
EXACT_INTEGER = 2 ** 53
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


def read_numbers(report: TableReport, text: str, names: list[str], decimal, thousands) -> None:
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
    text_cols = [c for c in frame.columns if is_text(frame[c])]
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
    parsed = read_frame(text, report.delimiter, names, usecols=chosen, decimal=dec, low_memory=False) if fast \
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


def keep_exact_values(report: TableReport, text: str, names: list[str]) -> None:
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
        with read_frame(text, delimiter, names, usecols=look, dtype=str, chunksize=200_000) as chunks:
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
    raw = read_frame(text, delimiter, names, usecols=keep, dtype=str, low_memory=False)
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
            report.findings.append(Finding("kept_as_text", big_integer_message(c), c, severity="info"))


def big_integer_message(col) -> str:
    return (f"{col!r} holds integers beyond 2^53 (9,007,199,254,740,992), which cannot all be told apart as "
            "floating-point numbers; the column was kept as text, exactly as written (codes or identifiers?)")
