"""A corpus of hostile inputs, generated per class (no binary fixtures): tables for ``tcrex.intake.read_table``
(then the engine, the CSV export and the HTML report) and model files for ``tcrex.intake.load_model``.

Every case is rebuilt from its name alone (deterministic), so a child process can regenerate it:
``benchmarks/hostile_corpus.py`` runs each case in a subprocess with a memory limit and a timeout and classifies
the outcome (ok / clear refusal / crash / hang / memory / silent change / formula / code execution / XSS);
``tests/intake/test_hostile_corpus.py`` runs a small deterministic subset.

A table case declares what the file holds as its writer meant it (:class:`Expect`): the columns, the first values
of some columns, the findings that must accompany the reading (``require``) and the findings that justify a
reading that differs from what was written (``allow``). A reading that differs without such a finding is a
*silent change*. Model cases reuse the generators of ``builders.py`` and ``hostile_models.py``.
"""
from __future__ import annotations

import copy
import io
import json
import random
import zipfile
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from tests.support import builders as b
from tests.support import hostile_models as hm

XSS = "<script>tcrexXSS()</script>"
XSS_IMG = '<img src=x onerror="tcrexXSS()">'
FORMULAS = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1:A2)", "\t=1+1", "\r=1+1", "=HYPERLINK(\"http://x\")"]


@dataclass
class Expect:
    """What a table holds, as its writer meant it."""

    refuse: bool = False  # the only acceptable answer is a refusal
    columns: list | None = None
    values: dict = field(default_factory=dict)  # column -> first values (str: exact text; number: numeric; None: NaN)
    require: set = field(default_factory=set)  # finding kinds that must be present
    allow: set = field(default_factory=set)  # finding kinds that justify a reading different from `values`


@dataclass
class Case:
    name: str  # "table/<class>/<case>", "model/<format>/<case>" or "rules/rules/<case>"
    cls: str  # the class counted in the tally
    kind: str  # "table", "model" or "rules" (a T-CREx rules export, read by TCREx.from_json)
    filename: str
    make: Callable[[str], bytes]  # marker path -> the file's bytes (a payload would create the marker)
    expect: Expect | None = None
    read_kwargs: dict = field(default_factory=dict)
    table: str = "loans"  # the table a model case is checked and run on ("loans" or "numeric")
    quick: bool = False  # in the pytest subset


# ---------------------------------------------------------------------------------------------- table helpers
def _frame(n=60, seed=0) -> pd.DataFrame:
    X, y = b.loans(n=n, seed=seed)
    return X.assign(approved=y)


def _csv(df: pd.DataFrame, **kw) -> bytes:
    enc = kw.pop("encoding", "utf-8")
    return df.to_csv(index=False, **kw).encode(enc)


def _exact(df: pd.DataFrame, k=5) -> Expect:
    return Expect(columns=list(df.columns), values={c: df[c].head(k).tolist() for c in df.columns})


def _parquet(table) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _table_cases() -> list[Case]:
    cases: list[Case] = []

    def add(cls, name, filename, make, expect=None, quick=False, **kw):
        cases.append(Case(f"table/{cls}/{name}", cls, "table", filename, lambda marker, m=make: m(), expect,
                          read_kwargs=kw, quick=quick))

    base = _frame()
    fr = pd.DataFrame({"ville": ["Besançon", "Orléans", "Sète", "Évry"] * 15, "prix": range(60),
                       "approved": [0, 1] * 30})
    # ------------------------------------------------------------------ encodings
    add("encoding", "utf8", "t.csv", lambda: _csv(fr), _exact(fr), quick=True)
    add("encoding", "utf8-bom", "t.csv", lambda: b"\xef\xbb\xbf" + _csv(fr), _exact(fr))
    add("encoding", "latin1", "t.csv", lambda: _csv(fr, encoding="latin-1"), _exact(fr) | _allow("encoding"),
        quick=True)
    add("encoding", "cp1252-euro", "t.csv", lambda: _csv(fr.assign(ville=fr.ville + " €"), encoding="cp1252"),
        _exact(fr.assign(ville=fr.ville + " €")))
    for codec in ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"):
        add("encoding", codec, "t.csv", lambda c=codec: _csv(fr, encoding=c), _exact(fr), quick=codec == "utf-16-le")

    def mostly_utf8():
        lines = _csv(fr).split(b"\n")
        for i in (6, 18, 42):  # lines of "Orléans"
            lines[i] = lines[i].replace("é".encode(), b"\xe9").replace("è".encode(), b"\xe8")
        return b"\n".join(lines)

    add("encoding", "mostly-utf8-bad-bytes", "t.csv", mostly_utf8,
        Expect(columns=list(fr.columns), values={"ville": fr.ville.head(8).tolist()}, require={"encoding"},
               allow={"encoding"}), quick=True)
    add("encoding", "one-bad-byte-in-ascii", "t.csv",
        lambda: _csv(base).replace(b"clerk", b"cl\xe9rk", 1), Expect(columns=list(base.columns), allow={"encoding"},
                                                                     require={"encoding"}))
    add("encoding", "nul-bytes", "t.csv", lambda: _csv(base).replace(b",", b"\x00,", 3), Expect(refuse=True))
    add("encoding", "broken-utf16", "t.csv",
        lambda: "a,b\n1,2\n".encode("utf-16-le") + b"\x00\xd8" + "3,4\n".encode("utf-16-le"), Expect(refuse=True))
    add("encoding", "bom-then-latin1", "t.csv", lambda: b"\xef\xbb\xbf" + _csv(fr, encoding="latin-1"),
        Expect(columns=list(fr.columns), require={"encoding"}, allow={"encoding"}))
    # ------------------------------------------------------------------ delimiters
    for sep in (";", "\t", "|"):
        add("delimiter", f"sep-{ord(sep)}", "t.csv", lambda s=sep: _csv(base, sep=s), _exact(base),
            quick=sep == ";")
    add("delimiter", "header-comma-rows-semicolon", "t.csv",
        lambda: b"a,b,c\n" + _csv(base.iloc[:, :3], sep=";", header=False), Expect(refuse=True), quick=True)
    add("delimiter", "rows-not-split", "t.csv", lambda: b"a,b,c\n" + b"1 2 3\n" * 30, Expect(refuse=True))
    for sep in (";", ",", "\t"):
        add("delimiter", f"excel-sep-line-{ord(sep)}", "t.csv", lambda s=sep: f"sep={s}\r\n".encode()
            + _csv(base, sep=s, lineterminator="\r\n"), _exact(base) | _require("sep_line"), quick=sep == ";")
    quoted = pd.DataFrame({"Income\n(EUR)": [1, 2, 3] * 10, 'a "b"\r\nc': ["x", "y", "z"] * 10,
                           "approved": [0, 1, 1] * 10})
    add("delimiter", "header-with-line-breaks", "t.csv", lambda: _csv(quoted),
        Expect(columns=["Income (EUR)", 'a "b" c', "approved"], values={"Income (EUR)": [1, 2, 3]},
               require={"renamed"}), quick=True)
    add("delimiter", "colon-single-column", "t.csv", lambda: _csv(base, sep=":"),
        Expect(require={"single_column"}, allow={"single_column"}))
    add("delimiter", "ragged-long-rows", "t.csv", lambda: b"a,b\n1,2\n3,4,5,6\n" * 10, Expect(refuse=True))
    add("delimiter", "quote-never-closed", "t.csv", lambda: b'a,b\n1,"2\n3,4\n' + b"5,6\n" * 10, None)
    # a quoted field never defines the delimiter: this comma file also splits evenly at the pipes inside
    # its quoted header and values, which read it as 4 columns without the label
    piped = pd.DataFrame({"id": range(30), "q1|q2|q3|q4": ["a|b|c|d", "e|f|g|h"] * 15, "approved": [0, 1, 1] * 10})
    add("delimiter", "quoted-pipes-in-comma-file", "t.csv", lambda: b'id,"q1|q2|q3|q4",approved\n' + b"".join(
        b'%d,"%s",%d\n' % (i, q.encode(), a) for i, q, a in piped.itertuples(index=False)),
        _exact(piped) | _require("delimiter"), quick=True)
    semi = pd.DataFrame({"name": ["Doe, J", "Roe, K"] * 15, "a,b,c": ["1,2,3", "4,5,6"] * 15,
                         "approved": [0, 1, 1] * 10})
    add("delimiter", "quoted-commas-in-semicolon-file", "t.csv", lambda: _csv(semi, sep=";", quoting=1),
        _exact(semi) | _require("delimiter"), quick=True)
    # ------------------------------------------------------------------ decimal and thousands separators
    euro = pd.DataFrame({"montant": [1.5, 2.25, 1234.5, 10.0] * 10, "n": range(40), "approved": [0, 1] * 20})
    add("separators", "decimal-comma", "t.csv", lambda: _csv(euro, sep=";", decimal=","),
        _exact(euro) | _require("separators"), quick=True)
    add("separators", "ambiguous-1,234", "t.csv",
        lambda: b"a;b;approved\n" + b"".join(f"{i % 9 + 1},{i * 37 % 1000:03d};{i};{i % 2}\n".encode()
                                             for i in range(40)),
        Expect(require={"ambiguous_separator"}, allow={"ambiguous_separator"}), quick=True)
    add("separators", "thousands-point-decimal-comma", "t.csv",
        lambda: b"a;b;approved\n" + b"1.234.567,5;1;0\n2,25;2;1\n" * 20,
        Expect(values={"a": [1234567.5, 2.25]}, require={"separators"}))
    add("separators", "us-quoted-thousands", "t.csv",
        lambda: b"a,b,approved\n" + b'"1,234",x,0\n"2,345,678.5",y,1\n' * 20,
        Expect(values={"a": [1234, 2345678.5]}, require={"separators"}))
    add("separators", "loose-grouping", "t.csv", lambda: b"a;b;approved\n" + b"1.5,2;1;0\n12,34,5;2;1\n" * 20,
        Expect(values={"a": ["1.5,2", "12,34,5"]}))
    # ------------------------------------------------------------------ values that must stay exact
    add("exact values", "leading-zero-codes", "t.csv",
        lambda: b"code,x,approved\n" + b"".join(f"{c},{i},{i % 2}\n".encode()
                                                for i, c in enumerate(["007", "07", "7", "0042", "42"] * 8)),
        Expect(values={"code": ["007", "07", "7", "0042", "42"]}), quick=True)
    add("exact values", "leading-zero-late", "t.csv",
        lambda: b"zip,x,approved\n" + b"".join(f"{i},{i % 5},{i % 2}\n".encode() for i in range(1, 3000))
        + b"00042,1,0\n", Expect(values={"zip": ["1", "2", "3"]}))
    big = [2 ** 53 + 1, 2 ** 53, 2 ** 53 + 2, 2 ** 60 + 1]
    add("exact values", "big-int-with-gap", "t.csv",
        lambda: b"id,x,approved\n" + b"".join(f"{'' if i == 2 else big[i % 4]},{i},{i % 2}\n".encode()
                                              for i in range(40)),
        Expect(values={"id": [str(big[0]), str(big[1]), None, str(big[3])]}), quick=True)
    add("exact values", "big-int-no-gap", "t.csv",
        lambda: b"id,x,approved\n" + b"".join(f"{big[i % 4] + i},{i},{i % 2}\n".encode() for i in range(40)),
        Expect(values={"id": [str(big[i % 4] + i) for i in range(4)]}))
    add("exact values", "huge-int-beyond-int64", "t.csv",
        lambda: b"id,x,approved\n" + b"".join(f"{10 ** 30 + i},{i},{i % 2}\n".encode() for i in range(40)),
        Expect(values={"id": [str(10 ** 30 + i) for i in range(3)]}))
    # ------------------------------------------------------------------ line endings
    add("line endings", "cr-only", "t.csv", lambda: _csv(base, lineterminator="\r"), _exact(base), quick=True)
    add("line endings", "cr-only-no-final", "t.csv", lambda: _csv(base, lineterminator="\r").rstrip(b"\r"),
        _exact(base), quick=True)
    add("line endings", "cr-only-truncated", "t.csv", lambda: _csv(base, lineterminator="\r")[:-9],
        Expect(require={"truncated"}, allow={"truncated", "missing"}), quick=True)
    add("line endings", "crlf", "t.csv", lambda: _csv(base, lineterminator="\r\n"), _exact(base))
    add("line endings", "mixed", "t.csv",
        lambda: _csv(base).replace(b"\n", b"\r", 10).replace(b"\n", b"\r\n", 10), _exact(base))
    add("line endings", "cr-inside-quotes", "t.csv",  # CRLF lines, so the writer quotes the bare CR
        lambda: _csv(base.assign(job=base.job + "\rx"), lineterminator="\r\n"), _exact(base.assign(job=base.job + "\rx")))
    # ------------------------------------------------------------------ sizes
    add("size", "10k-columns", "t.csv", lambda: (",".join(f"c{i}" for i in range(10_000)) + "\n"
                                                 + ",".join("1" * 10_000) + "\n").encode(), Expect(refuse=True),
        quick=True)
    add("size", "over-max-bytes", "t.csv", lambda: _csv(_frame(3000)), Expect(refuse=True), max_bytes=10_000)
    add("size", "one-huge-cell", "t.csv", lambda: b"a,b,approved\n" + b"x" * 2_000_000 + b",1,0\n" + b"y,2,1\n" * 30,
        None)
    add("size", "huge-header-cell", "t.csv", lambda: b"a" * 500_000 + b",b\n1,2\n", None)
    add("size", "many-rows", "t.csv", lambda: b"a,b,approved\n" + b"1,2,0\n3,4,1\n" * 400_000, None)
    add("size", "empty", "t.csv", lambda: b"", Expect(refuse=True))
    add("size", "header-only", "t.csv", lambda: b"a,b,c\n", Expect(refuse=True))
    # ------------------------------------------------------------------ Parquet
    import pyarrow as pa

    add("parquet", "row-bomb-30M", "bomb.parquet",
        lambda: _parquet(pa.table({"x": pa.array(np.zeros(30_000_000, dtype=np.int64))})), Expect(refuse=True),
        quick=True, max_bytes=1024 * 1024)
    add("parquet", "string-bomb", "bomb.parquet",
        lambda: _pq_compressed(pa.table({"s": pa.array(["a" * 50_000_000])})), Expect(refuse=True),
        max_bytes=1024 * 1024)
    add("parquet", "binary-not-utf8", "b.parquet",
        lambda: _parquet(pa.table({"blob": pa.array([b"caf\xe9", b"ok"] * 20, pa.binary()), "x": range(40),
                                   "approved": [0, 1] * 20})),
        Expect(values={"blob": ["caf\ufffd", "ok"]}, require={"encoding"}, allow={"encoding"}), quick=True)
    add("parquet", "string-not-utf8", "b.parquet",
        lambda: _parquet(pa.table({"s": pa.array([b"caf\xe9", b"x"] * 20, pa.binary()).view(pa.string()),
                                   "x": range(40), "approved": [0, 1] * 20})),
        Expect(values={"s": ["caf\ufffd", "x"]}, require={"encoding"}, allow={"encoding"}), quick=True)
    add("parquet", "big-int-nullable", "b.parquet",
        lambda: _parquet(pa.table({"id": pa.array([big[0], None, big[1]] * 10, pa.int64()), "x": range(30),
                                   "approved": [0, 1, 1] * 10})),
        Expect(values={"id": [str(big[0]), None, str(big[1])]}))
    add("parquet", "nested-deep", "n.parquet", lambda: _parquet(pa.table({"x": pa.array([_nest(60)])})),
        Expect(refuse=True))
    add("parquet", "truncated", "t.parquet", lambda: b.parquet_bytes(base)[:-40], Expect(refuse=True))
    add("parquet", "many-row-groups", "m.parquet", lambda: _pq_groups(base), _exact(base))
    add("parquet", "dictionary", "d.parquet", lambda: b.parquet_bytes(base.astype({"job": "category"})),
        Expect(columns=list(base.columns)))
    # ------------------------------------------------------------------ archives, nesting, garbage
    add("archive", "zip-bomb-as-xlsx", "t.xlsx", _zip_bomb, Expect(refuse=True), quick=True)
    add("archive", "zip-as-csv", "t.csv", _zip_bomb, Expect(refuse=True))
    add("nesting", "deep-quotes", "t.csv", lambda: b'a,b,approved\n"' + b'""' * 200_000 + b'",1,0\n' + b"x,2,1\n" * 5,
        None)
    add("nesting", "json-in-cells", "t.csv", lambda: b'a,b,approved\n"' + b"[" * 10_000 + b'",1,0\nx,2,1\n' * 5,
        None)
    for seed in range(3):
        add("garbage", f"random-{seed}-csv", "g.csv", lambda s=seed: b.garbage(seed=s), Expect(refuse=True))
        add("garbage", f"random-{seed}-parquet", "g.parquet", lambda s=seed: b"PAR1" + b.garbage(seed=s) + b"PAR1",
            Expect(refuse=True))
    # ------------------------------------------------------------------ formula cells, XSS strings
    evil = pd.DataFrame({"name": (FORMULAS * 6)[:40], "x": range(40), "approved": [0, 1] * 20})
    add("formula", "formula-values", "t.csv", lambda: _csv(evil), Expect(columns=list(evil.columns)), quick=True)
    evil_cols = pd.DataFrame({"=1+1": range(40), "@cmd": [1.5, 2.5] * 20, "-x": ["a", "b"] * 20,
                              "approved": [0, 1] * 20})
    add("formula", "formula-column-names", "t.csv", lambda: _csv(evil_cols), Expect(columns=list(evil_cols.columns)),
        quick=True)
    xss = pd.DataFrame({XSS: [XSS, XSS_IMG] * 20, XSS_IMG: range(40), "approved": [0, 1] * 20})
    add("xss", "xss-names-and-values", "t.csv", lambda: _csv(xss), Expect(columns=list(xss.columns)), quick=True)
    add("xss", "xss-filename", f"{XSS}.csv", lambda: _csv(base), _exact(base))
    # ------------------------------------------------------------------ random mutations (no declared reading)
    for seed in range(24):
        add("mutation", f"csv-{seed}", "m.csv", lambda s=seed: _mutated_csv(s), quick=seed == 0)
        add("mutation", f"parquet-{seed}", "m.parquet", lambda s=seed: _mutated_parquet(s), quick=seed == 0)
    # ------------------------------------------------------------------ every mechanism at once, generated
    for enc in ("utf-8", "cp1252", "utf-16-le", "utf-32-be"):
        for sep in (",", ";", "\t"):
            for eol in ("\n", "\r\n", "\r"):
                for sep_line in (False, True):
                    name = f"{enc}-{ord(sep)}-{'+'.join(str(ord(e)) for e in eol)}-{'sep' if sep_line else 'nosep'}"
                    add("combined", name, "t.csv", lambda e=enc, s=sep, eol=eol, x=sep_line: _combined(e, s, eol, x),
                        _combined_expect(sep), quick=name in ("cp1252-59-13-sep", "utf-32-be-9-10-nosep"))
    return cases


_PIECES = [b"\r", b"\n", b"\r\n", b'"', b",", b";", b"\t", b"\xe9", b"\xff\xfe", b"sep=;\n", b"\xc3", b"007",
           b"1,234", b"=cmd|' /C calc'!A0", "é".encode(), b"\xef\xbb\xbf", b"9" * 20, b"<script>tcrexXSS()</script>"]


def _mutated_csv(seed: int) -> bytes:
    """The loans table as CSV with 1-8 random insertions of hostile pieces and deletions."""
    return b.insert_or_delete(_csv(_frame(80, seed)), random.Random(seed), _PIECES, 8)


def _mutated_parquet(seed: int) -> bytes:
    """A Parquet file of the loans table with 1-6 random bytes overwritten (pages, footer, metadata)."""
    rng = random.Random(seed)
    data = bytearray(b.parquet_bytes(_frame(80, seed)))
    for _ in range(rng.randint(1, 6)):
        data[rng.randrange(4, len(data) - 4)] = rng.randrange(256)
    return bytes(data)


_NAMES = ["Zoë", "José", "Müller", "Ærø"]
_AMOUNTS = [1.5, -2.25, 1234.5, 0.001]
_CODES = ["007", "07", "7", "0042"]
_IDS = [str(2 ** 53 + k) for k in (1, 3, 5, 7)]


def _combined(enc: str, sep: str, eol: str, sep_line: bool) -> bytes:
    """Accented text, numbers with the delimiter's decimal convention, codes with leading zeros and integers beyond
    2**53, in one of several encodings, delimiters and line endings, with or without Excel's sep= line."""
    dec = "," if sep != "," else "."
    lines = ([f"sep={sep}"] if sep_line else []) + [sep.join(["name", "amount", "code", "id", "approved"])]
    for i in range(40):
        k = i % 4
        lines.append(sep.join([_NAMES[k], repr(_AMOUNTS[k]).replace(".", dec), _CODES[k], _IDS[k], str(i % 2)]))
    return (eol.join(lines) + eol).encode(enc)


def _combined_expect(sep: str) -> Expect:
    return Expect(columns=["name", "amount", "code", "id", "approved"],
                  values={"name": _NAMES, "amount": _AMOUNTS, "code": _CODES, "id": _IDS},
                  require={"separators"} if sep != "," else set())


def _allow(*kinds) -> Expect:
    return Expect(allow=set(kinds))


def _require(*kinds) -> Expect:
    return Expect(require=set(kinds))


def _merge(a: Expect, other: Expect) -> Expect:
    return Expect(refuse=a.refuse or other.refuse, columns=a.columns if a.columns is not None else other.columns,
                  values={**a.values, **other.values}, require=a.require | other.require,
                  allow=a.allow | other.allow)


Expect.__or__ = _merge  # `_exact(df) | _allow("encoding")`


def _nest(depth):
    v = [1]
    for _ in range(depth):
        v = [v]
    return v


def _pq_compressed(table) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", use_dictionary=False)
    return buf.getvalue()


def _pq_groups(df) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), buf, row_group_size=1)
    return buf.getvalue()


def _zip_bomb() -> bytes:
    return b.zip_bytes({"[Content_Types].xml": "<Types/>", "xl/worksheets/sheet1.xml": b"\0" * 50_000_000})


# ---------------------------------------------------------------------------------------------- models
def _model_cases() -> list[Case]:
    cases: list[Case] = []

    def add(cls, name, filename, make, table="loans", quick=False):
        cases.append(Case(f"model/{cls}/{name}", cls, "model", filename, make, table=table, quick=quick))

    # ------------------------------------------------------------------ XGBoost
    for key, (edit, _) in hm.XGB_MUTATIONS.items():
        add("xgboost", f"mutation-{key}", "m.json", lambda marker, e=edit: _xgb_edit(e), quick=key in (
            "child-out-of-range", "loop-to-root", "num-class-huge"))
    for seed in range(30):
        add("xgboost", f"json-fuzz-{seed}", "m.json", lambda marker, s=seed: _xgb_json_fuzz(s))
        add("xgboost", f"ubj-fuzz-{seed}", "m.ubj", lambda marker, s=seed: _xgb_ubj_fuzz(s))
    for fmt in ("json", "ubj"):
        for frac in (0.1, 0.5, 0.99):
            add("xgboost", f"truncated-{fmt}-{frac}", f"m.{fmt}",
                lambda marker, f=fmt, r=frac: (lambda d: d[:int(len(d) * r)])(b.xgb_classifier(fmt=f,
                                                                                                n_estimators=3)[0]))
    add("xgboost", "ubj-huge-count", "m.ubj", lambda marker: hm.ubj_with_count(2 ** 60), quick=True)
    add("xgboost", "ubj-true-bomb", "m.ubj", lambda marker: hm.ubj_true_bomb(), quick=True)
    add("xgboost", "json-deep", "m.json", lambda marker: b'{"learner": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    add("xgboost", "base-score-odd", "m.json", lambda marker: _xgb_edit(
        lambda d: d["learner"]["learner_model_param"].__setitem__("base_score", "[1E400,nan]")))
    # ------------------------------------------------------------------ scikit-learn through skops
    for key, (edit, _) in hm.SCHEMA_EDITS.items():
        add("skops", f"schema-{key}", "m.skops", lambda marker, e=edit: b.rewrite_skops_schema(hm.lr_skops(), e),
            table="numeric", quick=key == "object-os-system")
    add("skops", "zip-bomb", "m.skops", lambda marker: _skops_zip_bomb(), table="numeric", quick=True)
    add("skops", "function-os-system", "m.skops", lambda marker: _skops_os_system(), table="numeric")
    for key, (edit, _) in hm.SIZE_EDITS.items():  # sizes declared in the schema
        add("skops", f"declared-{key}", "m.skops", lambda marker, e=edit: b.rewrite_skops_schema(hm.lr_skops(), e),
            table="numeric", quick=key == "ndarray-object-250m")
    add("skops", "two-schemas", "m.skops", lambda marker: hm.skops_duplicate_schema(), table="numeric", quick=True)
    add("skops", "zeros-300mb-in-300kb", "m.skops", lambda marker: hm.skops_big_zeros(), table="numeric")
    for est in ("tree", "forest", "hgb"):
        for seed in range(8):
            add("skops", f"npy-fuzz-{est}-{seed}", "m.skops", lambda marker, e=est, s=seed: _skops_npy_fuzz(e, s),
                table="numeric", quick=(est, seed) == ("tree", 0))
    for frac in (0.3, 0.9):
        add("skops", f"truncated-{frac}", "m.skops",
            lambda marker, r=frac: (lambda d: d[:int(len(d) * r)])(hm.lr_skops()), table="numeric")
    # ------------------------------------------------------------------ ONNX
    add("onnx", "external-data", "m.onnx", lambda marker: b.onnx_bytes(b.onnx_external_data()), table="numeric",
        quick=True)
    add("onnx", "external-data-parent-dir", "m.onnx",
        lambda marker: b.onnx_bytes(b.onnx_external_data("../../etc/passwd")), table="numeric")
    add("onnx", "external-in-subgraph", "m.onnx", lambda marker: b.onnx_bytes(b.onnx_external_in_subgraph()),
        table="numeric")
    add("onnx", "custom-domain", "m.onnx", lambda marker: b.onnx_bytes(b.onnx_custom_domain()), table="numeric")
    add("onnx", "custom-function", "m.onnx", lambda marker: b.onnx_bytes(b.onnx_custom_function()), table="numeric")
    add("onnx", "constant-of-shape-huge", "m.onnx", lambda marker: _onnx_constant_of_shape(), table="numeric")
    add("onnx", "loop-endless", "m.onnx", lambda marker: _onnx_loop(), table="numeric")
    for frac in (0.2, 0.8):
        add("onnx", f"truncated-{frac}", "m.onnx",
            lambda marker, r=frac: (lambda d: d[:int(len(d) * r)])(b.onnx_bytes(b.onnx_linear_classifier())),
            table="numeric")
    add("onnx", "garbage", "m.onnx", lambda marker: b.garbage(seed=5), table="numeric")
    add("onnx", "tree-feature-1000-of-3", "m.onnx", lambda marker: b.onnx_tree_model(1000), table="numeric", quick=True)
    add("onnx", "tree-feature-1000-dynamic-width", "m.onnx", lambda marker: b.onnx_tree_model(1000, width=None),
        table="numeric")
    # ------------------------------------------------------------------ LightGBM and CatBoost (tests/support/hostile_trees.py)
    from tests.support import hostile_trees as ht

    quick = {"loop-two-nodes", "million-trees", "split-out-of-range", "ctr-table-damage-0"}
    for key, (make, _) in ht.LGB_MUTATIONS.items():
        add("lightgbm", key, "m.json" if key.startswith("dump") else "m.txt", lambda marker, m=make: m(),
            quick=key in quick)
    for key, (make, _) in ht.CBM_MUTATIONS.items():
        add("catboost", f"cbm-{key}", "m.cbm", lambda marker, m=make: m(), quick=f"cbm-{key}" in {
            "cbm-split-out-of-range", "cbm-ctr-table-damage-0"})
    for key, (make, _) in ht.CB_JSON_MUTATIONS.items():
        add("catboost", f"json-{key}", "m.json", lambda marker, m=make: m(), quick=key == "million-trees")
    for seed in range(12):
        add("catboost", f"cbm-fuzz-{seed}", "m.cbm", lambda marker, s=seed: ht.cbm_fuzz(s))
        add("lightgbm", f"text-fuzz-{seed}", "m.txt", lambda marker, s=seed: ht.lgb_text_fuzz(s))
    # ------------------------------------------------------------------ pickles disguised as other formats
    for name in ("m.json", "m.skops", "m.onnx", "m.ubj"):
        add("pickle", f"pickle-as-{name}", name, lambda marker: b.evil_pickle(marker, b.sklearn_pipeline()),
            quick=name == "m.json")
        add("pickle", f"joblib-as-{name}", name, lambda marker: b.evil_joblib(marker, b.sklearn_pipeline()))
    return cases


def _xgb_edit(edit) -> bytes:
    data, _, _ = b.xgb_classifier(n_estimators=3)
    d = json.loads(data)
    edit(d)
    return json.dumps(d).encode()


def _leaves(o, path=()):
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from _leaves(v, path + (i,))
    else:
        yield path


def _xgb_json_fuzz(seed) -> bytes:
    data, _, _ = b.xgb_classifier(n_estimators=4)
    base = json.loads(data)
    paths = list(_leaves(base))
    values = [0, 1, -1, 2, 7, 255, 65536, 2 ** 31, -2 ** 31, 1e300, "1", None, "nan", [], {}]
    rng = random.Random(seed)
    d = copy.deepcopy(base)
    for _ in range(rng.randint(1, 3)):
        p = rng.choice(paths)
        o = d
        for k in p[:-1]:
            o = o[k]
        o[p[-1]] = rng.choice(values)
    return json.dumps(d).encode()


def _xgb_ubj_fuzz(seed) -> bytes:
    data, _, _ = b.xgb_classifier(n_estimators=4, fmt="ubj")
    buf = bytearray(data)
    rng = random.Random(seed)
    for _ in range(rng.randint(1, 4)):
        buf[rng.randrange(len(buf))] = rng.randrange(256)
    return bytes(buf)


def _skops_zip_bomb() -> bytes:
    return b.zip_bytes({"schema.json": "{}", "big.npy": b"\0" * 900_000_000})


def _skops_os_system() -> bytes:
    import os

    from sklearn.preprocessing import FunctionTransformer

    return b.skops_bytes(FunctionTransformer(os.system))


def _skops_npy_fuzz(est, seed) -> bytes:
    """A fitted tree model's .skops with bytes of its array members (past the .npy header) overwritten."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    X = b.numeric()
    y = (X.a + X.b > 0).astype(int)
    model = {"tree": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
             "forest": lambda: RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
             "hgb": lambda: HistGradientBoostingClassifier(max_iter=3, random_state=0)}[est]().fit(X, y)
    src = zipfile.ZipFile(io.BytesIO(b.skops_bytes(model)))
    members = [i.filename for i in src.infolist() if i.filename.endswith(".npy")]
    rng = random.Random(seed)
    targets = set(rng.sample(members, min(len(members), rng.randint(1, 3))))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            raw = bytearray(src.read(info.filename))
            if info.filename in targets and len(raw) > 140:
                for _ in range(rng.randint(1, 8)):
                    at = rng.randrange(128, len(raw))
                    raw[at] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
            dst.writestr(info.filename, bytes(raw))
    return out.getvalue()


def _onnx_constant_of_shape() -> bytes:
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    shape = nh.from_array(np.array([200_000, 200_000], dtype=np.int64), "shape")
    nodes = [h.make_node("ConstantOfShape", ["shape"], ["big"], value=h.make_tensor("v", T.FLOAT, [1], [1.0])),
             h.make_node("ReduceSum", ["big"], ["s"], keepdims=0),
             h.make_node("MatMul", ["X", "W"], ["y0"]),
             h.make_node("Add", ["y0", "s"], ["y"])]
    W = nh.from_array(np.ones((3, 1), dtype=np.float32), "W")
    graph = h.make_graph(nodes, "bomb", [h.make_tensor_value_info("X", T.FLOAT, [None, 3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [None, 1])], [shape, W])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _onnx_loop() -> bytes:
    """A regressor whose output passes through a Loop of 2**62 iterations (never ends)."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    body = h.make_graph([h.make_node("Identity", ["cond_in"], ["cond_out"]),
                         h.make_node("Identity", ["acc_in"], ["acc_out"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
                         h.make_tensor_value_info("acc_in", T.FLOAT, [None, 1])],
                        [h.make_tensor_value_info("cond_out", T.BOOL, []),
                         h.make_tensor_value_info("acc_out", T.FLOAT, [None, 1])])
    nodes = [h.make_node("MatMul", ["X", "W"], ["y0"]), h.make_node("Loop", ["M", "cond", "y0"], ["y"], body=body)]
    inits = [nh.from_array(np.ones((3, 1), dtype=np.float32), "W"), nh.from_array(np.array(2 ** 62), "M"),
             nh.from_array(np.array(True), "cond")]
    graph = h.make_graph(nodes, "loop", [h.make_tensor_value_info("X", T.FLOAT, [None, 3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [None, 1])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


# ---------------------------------------------------------------------------------------------- the corpus
# ---------------------------------------------------------------------------------------------- rules exports
def _rules_export() -> dict:
    """A real export (rules and metarules of a fit on the loans table's numbers)."""
    from tcrex import TCREx

    X, y = b.loans(n=400)
    return json.loads(TCREx(rho=0.05, tau=0.8).fit(X[["age", "income"]], y_pred=y).to_json())


def _rules_nested(n_rules: int = 20_000) -> bytes:
    """``n_rules`` nested rules on one numeric feature (a 2.6 MB file of 20,000 raised MemoryError at
    2.5 GB in the grid): 2 n + 1 cells, far below max_cells, but n x (2 n + 1) cell-by-rule table entries."""
    doc = _rules_export()
    doc["features"] = [{"name": "x", "type": "numeric"}]
    rules = [{"id": i, "conditions": {"x": {"low": -(i + 1.5), "high": i + 1.5}}, "n": 100 + i, "n_target": 100 + i,
              "feasibility": 0.5, "accuracy": 1.0, "complexity": 1} for i in range(n_rules)]
    doc["targets"] = [{**doc["targets"][0], "rules": rules,
                       "metarules": [{"id": 0, "rule": n_rules - 1, "conditions": {}, "sparsity": 0, "n_cells": 1}]}]
    doc["n_fit_rows"] = 10**6
    return json.dumps(doc).encode()


def _rules_many_cells(n_rules: int = 600, n_features: int = 4) -> bytes:
    """One-condition rules at distinct thresholds over 4 features: a 151^4 = 520 million cell grid."""
    doc = _rules_export()
    doc["features"] = [{"name": f"f{j}", "type": "numeric"} for j in range(n_features)]
    rules = [{"id": r, "conditions": {f"f{r % n_features}": {"low": None, "high": float(r)}}, "n": 10,
              "n_target": 10} for r in range(n_rules)]
    doc["targets"] = [{**doc["targets"][0], "rules": rules, "metarules": [{"id": 0, "rule": 0, "conditions": {}}]}]
    doc["n_fit_rows"] = 1000
    return json.dumps(doc).encode()


def _rules_edit(edit) -> bytes:
    doc = _rules_export()
    edit(doc)
    return json.dumps(doc).encode()


def _rules_cases() -> list[Case]:
    cases: list[Case] = []

    def add(name, make, quick=False):
        cases.append(Case(f"rules/rules/{name}", "rules", "rules", "rules.json", lambda marker, m=make: m(),
                          quick=quick))

    add("valid-export", lambda: json.dumps(_rules_export()).encode(), quick=True)
    add("nested-20000-rules-one-feature", _rules_nested, quick=True)
    add("grid-520-million-cells", _rules_many_cells)
    add("rho-5e-324", lambda: _rules_edit(lambda d: d["params"].__setitem__("rho", 5e-324)))
    add("max-cells-huge", lambda: _rules_edit(lambda d: d["params"].__setitem__("max_cells", 10**400)))
    add("n-fit-rows-huge", lambda: _rules_edit(lambda d: d.__setitem__("n_fit_rows", 10**400)))
    add("bound-1e400", lambda: _rules_edit(lambda d: d["targets"][0]["rules"][0]["conditions"].__setitem__(
        "age", {"low": None, "high": 1e308 * 10})).replace(b"Infinity", b"1e400"))
    add("truncated", lambda: json.dumps(_rules_export()).encode()[:500])
    add("deep", lambda: b'{"format": "tcrex-rules", "version": 2, "task": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    return cases


def cases() -> list[Case]:
    """Every case, in a fixed order (names are unique)."""
    out = _table_cases() + _model_cases() + _rules_cases()
    names = [c.name for c in out]
    assert len(names) == len(set(names)), "duplicate case names"
    return out


def case(name: str) -> Case:
    return next(c for c in cases() if c.name == name)


def model_table(name: str) -> pd.DataFrame:
    """The table a model case is checked on."""
    if name == "numeric":
        return b.numeric()
    X, _ = b.loans()
    return X
