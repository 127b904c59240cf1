"""Dictionary files as untrusted input, told apart by content:

* the **codebook CSV**, extended: the header ``feature,value,label`` or ``feature,value,label,kind``; a row with a
  value labels it (``kind`` ``label``, the default) or declares it a special code (``kind`` ``special``, the label
  its meaning); a row without a value describes the column: ``status_1,,repayment status last month`` is its
  title, and with a ``kind`` column ``title``, ``description``, ``unit``, ``type`` (numeric / categorical /
  ordered), ``actionability`` (free / immutable / increase_only / decrease_only) or ``history`` (yes / no);
* **JSON**: a ``tcrex-dictionary`` document (:meth:`DataDictionary.to_json`), a Frictionless **Table Schema**
  (an object with ``fields``) or a plain codebook ``{feature: {value: label}}``;

with the budgets of :mod:`tcrex.intake.labels` (5 MB, 100,000 labels) and its messages. Nothing is applied
partly: a reader returns a whole, checked :class:`DataDictionary` or raises :class:`tcrex.errors.DataError`."""
from __future__ import annotations

import csv
import io
import json

from ..codebook import MAX_LABELS
from ..errors import DataError, ParameterError, SchemaError
from ..codebook import MAX_CODEBOOK_BYTES, DuplicateKey, loads_without_duplicate_keys
from ..vocabulary import CATEGORICAL, NUMERIC
from ._record import (ACTIONABILITY, DICTIONARY_FORMAT, KINDS, MAX_FEATURES, ORDERED, DataDictionary,
                      FeatureEntry, value_key)

#: The largest dictionary file read (the codebook's budget).
MAX_DICTIONARY_BYTES = MAX_CODEBOOK_BYTES
#: Kinds of a CSV row: a value's label or special code, or a property of the column (empty value).
ROW_KINDS = ("label", "special", "order", "title", "description", "unit", "type", "actionability", "history")
_YES, _NO = {"yes", "true", "1", "y"}, {"no", "false", "0", "n", ""}
#: JSON nesting deeper than this is not a dictionary (a Table Schema is four levels deep).
MAX_DEPTH = 8


def _text(data, name: str) -> str:
    if not isinstance(data, (bytes, bytearray)):
        raise DataError(f"{name}: expected the bytes of a file")
    if len(data) > MAX_DICTIONARY_BYTES:
        raise DataError(f"{name} is {len(data) / 2**20:.1f} MB; a dictionary may be at most "
                        f"{MAX_DICTIONARY_BYTES // 2**20} MB (a few thousand labels take a few hundred kB)")
    if not bytes(data).strip():
        raise DataError(f"{name} is empty; a dictionary is a CSV with the columns feature,value,label[,kind] or a "
                        "JSON document (tcrex-dictionary, Table Schema or {feature: {value: label}})")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{name} is not UTF-8 text; save the dictionary as UTF-8 (CSV or JSON)") from None
    if "\x00" in text:
        raise DataError(f"{name} is not a text file (it holds NUL bytes)")
    return text


def read_dictionary(data: bytes, name: str = "dictionary") -> DataDictionary:
    """The dictionary in ``data`` (the bytes of a CSV or JSON file; see the module's text for the forms).
    Raises :class:`tcrex.errors.DataError` with a message a person can act on."""
    text = _text(data, name)
    try:
        if text.lstrip()[:1] in "{[":
            return _from_json(text, name)
        return _from_csv(text, name)
    except (ParameterError, SchemaError) as exc:
        raise DataError(f"{name}: {exc}") from None


def read_dictionary_file(path, name: str | None = None) -> DataDictionary:
    """:func:`read_dictionary` of a file on disk, read no further than the budget."""
    from pathlib import Path  # noqa: PLC0415

    from ..inputs import read_bounded  # noqa: PLC0415 - a file on disk only; read_dictionary takes bytes

    path = Path(path)
    shown_name = name or path.name
    # A regular file only (a device or a FIFO has no end or blocks) and never more than the budget + 1 bytes.
    data = read_bounded(path, MAX_DICTIONARY_BYTES, "the data dictionary",
                        limit_hint="split it or keep only the features the model uses")
    return read_dictionary(data, shown_name)


# ---------------------------------------------------------------------------------------- JSON
def _depth(value, limit: int) -> int:
    stack, deepest = [(value, 1)], 1
    while stack:
        item, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, d + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, d + 1) for v in item)
    return deepest


def _from_json(text: str, name: str) -> DataDictionary:
    try:
        doc = loads_without_duplicate_keys(text)  # a key given twice would silently keep its last value
    except DuplicateKey as exc:
        raise DataError(exc.words(name)) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{name} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise DataError(f"{name}: the JSON is nested far too deeply for a dictionary") from None
    if _depth(doc, MAX_DEPTH) > MAX_DEPTH:
        raise DataError(f"{name}: the JSON is nested deeper than a dictionary is ({MAX_DEPTH} levels at most)")
    if isinstance(doc, dict) and doc.get("format") == DICTIONARY_FORMAT:
        return DataDictionary.from_dict(doc, SchemaError)
    if isinstance(doc, dict) and isinstance(doc.get("fields"), list):
        return from_table_schema(doc)
    if isinstance(doc, dict) and all(isinstance(v, dict) for v in doc.values()):
        if sum(len(v) for v in doc.values()) > MAX_LABELS:
            raise DataError(f"{name} has more than {MAX_LABELS:,} labels; that is not a codebook")
        return DataDictionary.from_parts(value_labels=doc)
    raise DataError(f"{name}: a JSON dictionary is a {DICTIONARY_FORMAT} document, a Table Schema (an object with \"fields\") "
                    'or a codebook {feature: {value: label}}, e.g. {"Checking_account_status": {"A14": "no checking '
                    'account"}}')


_TS_NUMERIC = {"integer", "number", "year"}


def from_table_schema(doc: dict) -> DataDictionary:
    """A dictionary from a Frictionless Table Schema descriptor (v1 or v2): per field ``name``, ``title``,
    ``description``, ``type`` (integer / number: numeric; a field with ``categories`` or a ``constraints.enum``:
    categorical, ordered when ``categoriesOrdered``), ``categories`` (values or ``{value, label}``), field-level
    ``missingValues`` (text or ``{value, label}``: the special codes of a numeric field) and the extension keys
    ``x-actionability`` and ``x-history``. The schema-level ``missingValues`` apply to every numeric field that
    has none of its own. Raises SchemaError (the reader turns it into a DataError)."""
    fields = doc["fields"]
    if len(fields) > MAX_FEATURES:
        raise SchemaError(f"the Table Schema has {len(fields):,} fields; at most {MAX_FEATURES:,} are allowed")
    schema_missing = doc.get("missingValues", [""])
    entries = []
    for k, f in enumerate(fields):
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            raise SchemaError(f"field {k + 1} of the Table Schema must be an object with a \"name\"")
        fname = f["name"]
        ftype = f.get("type", "any")
        if not isinstance(ftype, str):
            raise SchemaError(f"field {fname!r}: \"type\" must be text")
        categories = f.get("categories")
        enum = (f.get("constraints") or {}).get("enum") if isinstance(f.get("constraints"), dict) else None
        labels, order = [], []
        if categories is not None:
            if not isinstance(categories, list):
                raise SchemaError(f"field {fname!r}: \"categories\" must be a list")
            for c in categories:
                if isinstance(c, dict):
                    if "value" not in c:
                        raise SchemaError(f"field {fname!r}: a category object needs a \"value\"")
                    order.append(c["value"])
                    if c.get("label") is not None:
                        labels.append((c["value"], c["label"]))
                else:
                    order.append(c)
        elif isinstance(enum, list):
            order = list(enum)
        numeric = ftype in _TS_NUMERIC
        kind = (ORDERED if f.get("categoriesOrdered") is True else CATEGORICAL) if order and not numeric else (
            NUMERIC if numeric else CATEGORICAL if ftype in ("string", "boolean") else None)
        if numeric and order:  # integer categories: labelled values of a number (codes only if declared so)
            kind = ORDERED if f.get("categoriesOrdered") is True else CATEGORICAL
        missing = f.get("missingValues", schema_missing if numeric else [])
        if not isinstance(missing, list):
            raise SchemaError(f"field {fname!r}: \"missingValues\" must be a list")
        codes = []
        for m in missing:
            value, label = (m.get("value"), m.get("label")) if isinstance(m, dict) else (m, None)
            if isinstance(value, str) and not value.strip():
                continue  # the empty cell: a missing value, not a code
            if kind is None and value_key(value)[0] == "text":
                continue  # "NA" of a field of any type: a missing-value marker, not a code of a number
            codes.append((value, label))
        if codes and kind in (CATEGORICAL, ORDERED):
            labels.extend((v, lab) for v, lab in codes if lab is not None)  # a categorical's codes are categories
            codes = []
        extra = f.get("x-valueLabels") or []
        if not isinstance(extra, list) or not all(isinstance(x, dict) and "value" in x for x in extra):
            raise SchemaError(f"field {fname!r}: x-valueLabels must be a list of {{value, label}} objects")
        labels.extend((x["value"], x.get("label")) for x in extra)
        actionability = f.get("x-actionability")
        if actionability is not None and actionability not in ACTIONABILITY:
            raise SchemaError(f"field {fname!r}: x-actionability must be one of {', '.join(ACTIONABILITY)}")
        history = f.get("x-history", False)
        try:
            entries.append(FeatureEntry(
                fname, title=f.get("title"), description=f.get("description"), kind=kind, unit=f.get("unit"),
                labels=tuple(labels), codes=tuple(codes), order=tuple(order) if kind == ORDERED else (),
                actionability=actionability, history=history))
        except (ParameterError, TypeError) as exc:
            raise SchemaError(str(exc)) from None
    return DataDictionary(tuple(entries))


def to_table_schema(dictionary: DataDictionary) -> dict:
    """The dictionary as a Frictionless Table Schema descriptor (what :func:`from_table_schema` reads back)."""
    fields = []
    for e in dictionary.entries:
        f = {"name": e.name}
        if e.title:
            f["title"] = e.title
        if e.description:
            f["description"] = e.description
        if e.unit:
            f["unit"] = e.unit
        f["type"] = "number" if e.kind == NUMERIC else "string" if e.kind in (CATEGORICAL, ORDERED) else "any"
        labels = dict(e.labels)
        if e.kind in (CATEGORICAL, ORDERED):
            values = list(e.order) or list(labels)
            values += [v for v in labels if v not in values]
            f["categories"] = [{"value": v, "label": labels[v]} if v in labels else v for v in values]
            if e.kind == ORDERED:
                f["categoriesOrdered"] = True
        elif e.labels:  # labelled values of a number (or of a column of undeclared kind): an extension key
            f["x-valueLabels"] = [{"value": v, "label": lab} for v, lab in e.labels]
        f["missingValues"] = [{"value": str(v), "label": m} if m else str(v) for v, m in e.codes]  # [] for none
        if e.actionability:
            f["x-actionability"] = e.actionability
        if e.history:
            f["x-history"] = True
        fields.append(f)
    return {"fields": fields, "missingValues": [""]}


# ---------------------------------------------------------------------------------------- CSV
def _from_csv(text: str, name: str) -> DataDictionary:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except (csv.Error, StopIteration) as exc:
        raise DataError(f"{name} cannot be read as CSV: {exc}") from None
    if tuple(header) not in (("feature", "value", "label"), ("feature", "value", "label", "kind")):
        raise DataError(f"{name}: a CSV dictionary has the columns feature,value,label (and optionally kind) in that "
                        f"order in its first line; found {', '.join(repr(h) for h in header[:6])}")
    width = len(header)
    parts: dict = {}
    n = 0
    try:
        for line, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != width:
                raise DataError(f"{name}, line {line}: expected {width} fields ({','.join(header)}), found {len(row)}")
            feature, value, label = (cell.strip() for cell in row[:3])
            kind = row[3].strip().lower() if width == 4 and row[3].strip() else ("label" if value else "title")
            if not feature:
                raise DataError(f"{name}, line {line}: the feature must not be empty")
            if kind not in ROW_KINDS:
                raise DataError(f"{name}, line {line}: kind must be one of {', '.join(ROW_KINDS)}, got {kind!r}")
            n += 1
            if n > MAX_LABELS:
                raise DataError(f"{name} has more than {MAX_LABELS:,} rows; that is not a dictionary")
            p = parts.setdefault(feature, {"labels": {}, "codes": {}, "order": []})
            if kind == "order":  # a category of an ordered feature, in its place (its label optional)
                if not value or value in p["order"]:
                    raise DataError(f"{name}, line {line}: an order row needs a value not listed before")
                p["order"].append(value)
                if label:
                    p["labels"][value] = label
                continue
            if kind in ("label", "special"):
                if not value:
                    raise DataError(f"{name}, line {line}: a {kind} row needs a value")
                where = p["labels" if kind == "label" else "codes"]
                if value in p["labels"] or value in p["codes"]:
                    raise DataError(f"{name}, line {line}: {feature} = {value} already has an entry; give each value "
                                    "one row")
                where[value] = label
                continue
            if value:
                raise DataError(f"{name}, line {line}: a {kind} row describes the column, so its value must be "
                                "empty")
            if kind in p:
                raise DataError(f"{name}, line {line}: {feature} already has a {kind}")
            p[kind] = label
    except csv.Error as exc:
        raise DataError(f"{name} cannot be read as CSV: {exc}") from None
    entries = []
    for feature, p in parts.items():
        kind = p.get("type")
        if kind is not None and kind.lower() not in KINDS:
            raise DataError(f"{name}: {feature}: type must be one of {', '.join(KINDS)}, got {kind!r}")
        history = (p.get("history") or "").lower()
        if history not in _YES | _NO:
            raise DataError(f"{name}: {feature}: history must be yes or no, got {p.get('history')!r}")
        try:
            entries.append(FeatureEntry(
                feature, title=p.get("title"), description=p.get("description"), unit=p.get("unit"),
                kind=kind.lower() if kind else None, labels=tuple((_csv_value(v), lab) for v, lab in p["labels"].items()),
                codes=tuple((v, m or None) for v, m in p["codes"].items()),
                order=tuple(map(_csv_value, p["order"] + [v for v in p["labels"] if v not in p["order"]]))
                if (kind or "").lower() == ORDERED else (),
                actionability=(p.get("actionability") or None), history=history in _YES))
        except ParameterError as exc:
            raise DataError(f"{name}: {exc}") from None
    return DataDictionary(tuple(entries))


def _csv_value(text: str):
    """A CSV cell as a value: a number when the text is the number's own spelling ("3", "-2", "0.5"), else the text
    ("01", "A14", "1e3" stay text: a category spelled so is not the number)."""
    try:
        number = int(text)
        if str(number) == text:
            return number
    except ValueError:
        pass
    try:
        number = float(text)
        if repr(number) == text:
            return number
    except ValueError:
        pass
    return text


def to_csv_text(dictionary: DataDictionary) -> str:
    """The dictionary as the extended codebook CSV (``feature,value,label,kind``; :func:`read_dictionary` reads it
    back). Spreadsheet formulas are not neutralised here: this file is read back by tcrex, not opened as a report;
    an export of it to a spreadsheet goes through :mod:`tcrex.spreadsheet`."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["feature", "value", "label", "kind"])
    for e in dictionary.entries:
        for attr, kind in (("title", "title"), ("description", "description"), ("unit", "unit"), ("kind", "type"),
                           ("actionability", "actionability")):
            if getattr(e, attr) is not None:
                w.writerow([e.name, "", getattr(e, attr), kind])
        if e.history:
            w.writerow([e.name, "", "yes", "history"])
        labels = dict(e.labels)
        for v in e.order:
            w.writerow([e.name, v, labels.get(v, ""), "order"])
        for v in labels:
            if v not in e.order:
                w.writerow([e.name, v, labels[v], "label"])
        for v, m in e.codes:
            w.writerow([e.name, v, m or "", "special"])
    return out.getvalue()
