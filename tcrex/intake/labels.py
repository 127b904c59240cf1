"""Codebook files (value labels) as untrusted input: CSV ``feature,value,label`` or JSON ``{feature: {value:
label}}``, read with size caps, every label checked by :mod:`tcrex.codebook`, then matched to an explainer's
features so that unknown features and values are reported by name instead of failing the fit.

Nothing here runs code from the file; a label is plain text (HTML in it is escaped wherever it is drawn, a formula
in it is neutralised in spreadsheet exports by :mod:`tcrex.spreadsheet`).
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

from tcrex.codebook import (MAX_CODEBOOK_BYTES, MAX_LABELS, DuplicateKey, check_value_labels, loads_without_duplicate_keys,
                            match_feature, normalise_code)
from tcrex.errors import DataError, ParameterError
#: The header a CSV codebook must start with (case and surrounding spaces ignored).
CSV_COLUMNS = ("feature", "value", "label")


@dataclass
class CodebookReport:
    """A codebook matched to the features of an explainer: ``labels`` (what applies, ``{feature: {value:
    label}}``), ``notes`` (what was left out and why, one sentence each) and ``class_names`` (the codebook's
    labels of the label column's classes, ``{class: name}``, when the label column was named)."""

    labels: dict
    notes: list = field(default_factory=list)
    class_names: dict = field(default_factory=dict)

    @property
    def n_labels(self) -> int:
        return sum(len(v) for v in self.labels.values())


def read_codebook(data: bytes, name: str = "codebook") -> dict:
    """The codebook in ``data`` (CSV with the header ``feature,value,label``, or JSON ``{feature: {value:
    label}}``; told apart by content): ``{feature: {value: label}}`` with values as text (numbers in a JSON file
    stay numbers). Raises :class:`tcrex.errors.DataError` with a message a person can act on."""
    if not isinstance(data, (bytes, bytearray)):
        raise DataError(f"{name}: expected the bytes of a file")
    if len(data) > MAX_CODEBOOK_BYTES:
        raise DataError(f"{name} is {len(data) / 2**20:.1f} MB; a codebook may be at most "
                        f"{MAX_CODEBOOK_BYTES // 2**20} MB (a few thousand labels take a few hundred kB)")
    if not data.strip():
        raise DataError(f"{name} is empty; a codebook is a CSV with the columns feature,value,label or a JSON "
                        "object {feature: {value: label}}")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{name} is not UTF-8 text; save the codebook as UTF-8 (CSV or JSON)") from None
    if "\x00" in text:
        raise DataError(f"{name} is not a text file (it holds NUL bytes)")
    stripped = text.lstrip()
    raw = _from_json(stripped, name) if stripped[:1] in "{[" else _from_csv(text, name)
    try:
        return check_value_labels(raw)
    except ParameterError as exc:
        raise DataError(f"{name}: {exc}") from None


def _from_json(text: str, name: str) -> dict:
    try:
        doc = loads_without_duplicate_keys(text)
    except DuplicateKey as exc:
        raise DataError(exc.words(name)) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{name} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise DataError(f"{name}: the JSON is nested far too deeply for a codebook") from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise DataError(f"{name}: a JSON codebook is an object {{feature: {{value: label}}}}, e.g. "
                        '{"Checking_account_status": {"A14": "no checking account"}}')
    return doc


def _from_csv(text: str, name: str) -> dict:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except (csv.Error, StopIteration) as exc:
        raise DataError(f"{name} cannot be read as CSV: {exc}") from None
    if tuple(h.strip().lower() for h in header) != CSV_COLUMNS:
        raise DataError(f"{name}: a CSV codebook has exactly the columns feature,value,label (in that order) in "
                        f"its first line; found {', '.join(repr(h) for h in header[:6])}")
    out: dict = {}
    first: dict = {}  # (feature, the value's one spelling) -> (line, value as written)
    try:
        for line, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != 3:
                raise DataError(f"{name}, line {line}: expected 3 fields (feature,value,label), found {len(row)}")
            feature, value, label = (cell.strip() for cell in row)
            if not feature or not value:
                raise DataError(f"{name}, line {line}: the feature and the value must not be empty")
            labels = out.setdefault(feature, {})
            seen = first.setdefault((feature, normalise_code(value)), (line, value))
            if seen[0] != line:  # the same value again, perhaps spelled otherwise (1 and 1.0, 2 and 02, NFC)
                if labels[seen[1]] != label:
                    same = "" if seen[1] == value else f" ({seen[1]!r} and {value!r} are one value)"
                    raise DataError(f"{name}, lines {seen[0]} and {line}: {feature} = {value} has two labels, "
                                    f"{labels[seen[1]]!r} and {label!r}{same}; give each value one label")
                continue
            labels[value] = label
            if line > MAX_LABELS + 1:
                raise DataError(f"{name} has more than {MAX_LABELS:,} labels; that is not a codebook")
    except csv.Error as exc:
        raise DataError(f"{name} cannot be read as CSV: {exc}") from None
    return out


def fit_codebook(codebook: dict, schema, label_column: str | None = None) -> CodebookReport:
    """The labels of ``codebook`` that apply to ``schema`` (an explainer's ``schema_``), each value keyed as the
    data holds it, and a note for every feature or value left out: a feature that is not in the data, a category
    the data does not have, a code of a numeric feature that is not a number. ``label_column``: the data's label
    (target) column; its entry names the classes (``class_names``), it is in the data though not a feature."""
    checked = check_value_labels(codebook)
    kept, notes = {}, []
    classes = dict(checked.get(label_column) or {}) if label_column not in (None, *schema.names) else {}
    missing = [f for f in checked if f not in schema.names and f != label_column]
    if missing:
        notes.append(f"{len(missing)} feature{'s' if len(missing) > 1 else ''} of the codebook "
                     f"{'are' if len(missing) > 1 else 'is'} not in the data and left out: "
                     + ", ".join(repr(f) for f in missing[:8]) + (" …" if len(missing) > 8 else ""))
    for feature, labels in checked.items():
        if feature in missing or feature not in schema.names:  # the label column: its classes, above
            continue
        f = schema.features[schema.index(feature)]
        matched, unknown = match_feature(feature, f.is_categorical, f.categories, labels)
        if unknown:
            what = "values the data does not have" if f.is_categorical else "values that are not numbers"
            notes.append(f"{feature}: {len(unknown)} label{'s' if len(unknown) > 1 else ''} for {what} left out ("
                         + ", ".join(repr(v) for v in unknown[:5]) + (" …" if len(unknown) > 5 else "") + ")")
        if matched:
            kept[feature] = {value: label for value, label in labels.items() if value not in unknown}
    return CodebookReport(labels=kept, notes=notes, class_names=classes)
