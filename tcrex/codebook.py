"""Value labels (a codebook) and class names: what they may hold and how a value finds its label.

A codebook is ``{feature: {value: label}}``: per feature, the values as they appear in the data (text for a
categorical feature, numbers for a numeric feature's codes such as −7/−8/−9) and the words a person reads
("A14" -> "no checking account"). Class names are ``{class: name}`` (``{1: "approved"}``). Both are parameters of
:class:`tcrex.TCREx` (``value_labels=``, ``class_names=``), checked in ``fit`` against the data, kept in the JSON
export and used by every sentence, frame and figure through :func:`tcrex.text.value_text` (the one renderer of a
value).

Matching (one owner, here): a categorical feature's key names the category equal to it, or else the one whose text
is the key's text (a codebook read from a CSV holds ``"1"`` for the category ``1``), or else the one category whose
text reads as the same number; a numeric feature's key is a number (or text that reads as one, ``"-7"``) and labels
the values equal to it as floats (``-7``, ``-7.0``).

**One value, one spelling** (:func:`normalise_code`, the one owner of how a code is compared; readers of codebooks
and dictionaries import it): a code that reads as a number is compared by its value (``1``, ``1.0``, ``01``,
``-7e0``, ``−7`` with a Unicode minus, full-width ``７``; ``-0`` is ``0``), any other text after Unicode NFC
normalisation and stripping; ``True``/``False`` stay themselves. Two spellings of one code with different labels
are refused (:func:`check_value_labels`; the CSV reader names both lines). Matching is linear in the number of
labels and categories (dictionaries, never a scan of the categories per label).
Both are untrusted input when they come from a file: sizes are capped and a label is plain, printable text.
"""
from __future__ import annotations

import math
import numbers
import re
import unicodedata

import numpy as np

from .errors import ParameterError, SchemaError
from .text import shown

#: At most this many labels over all features (a codebook of a wide credit file has a few thousand).
MAX_LABELS = 100_000
#: Largest codebook or data dictionary file accepted (100,000 labels of 40 characters are about 5 MB).
MAX_CODEBOOK_BYTES = 5 * 2**20
#: The longest label, in characters (a phrase, not a paragraph).
MAX_LABEL_CHARS = 200


#: Control characters (C0, DEL and C1): a label holding one would break a sentence, a CSV line or a figure.
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f]")


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


#: Minus signs other than ASCII's that people and spreadsheets write before a number.
_MINUS = {"\u2212": "-", "\u2012": "-", "\u2013": "-", "\ufe63": "-", "\uff0d": "-"}


def code_number(value) -> float | None:
    """The number a code stands for, or None: numbers as floats (``-0`` is ``0``), text that reads as a finite
    number after NFKC normalisation (full-width digits), with a Unicode minus read as ``-`` (``"02"``, ``"1.0"``,
    ``"-7e0"``, ``"−7"``, ``"７"``); booleans and other text are not numbers."""
    value = _plain(value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, numbers.Real):
        out = float(value)
    elif isinstance(value, str):
        text = unicodedata.normalize("NFKC", value).strip()
        for minus, ascii_minus in _MINUS.items():
            text = text.replace(minus, ascii_minus)
        if not text:
            return None
        try:
            out = float(text.replace("_", "?"))  # float() takes 1_000; a code written so is text
        except ValueError:
            return None
    else:
        return None
    if not math.isfinite(out):
        return None
    return out + 0.0  # -0.0 + 0.0 is 0.0


def normalise_code(value):
    """The one spelling of a codebook value, by which values are compared: a float for anything that reads as a
    number (:func:`code_number`), ``True``/``False`` for booleans, else the text NFC-normalised and stripped. Two
    values with equal ``normalise_code`` are one value: they may not carry two labels."""
    value = _plain(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    number = code_number(value)
    if number is not None:
        return number
    return unicodedata.normalize("NFC", str(value)).strip()


def check_label(label, where: str) -> str:
    """``label`` as a label, or a ParameterError naming ``where``: non-empty text of at most
    :data:`MAX_LABEL_CHARS` characters without control characters (a line break in a label would break the
    sentence, the CSV line and the figure)."""
    if not isinstance(label, str):
        raise ParameterError(f"{where}: a label must be text, got {shown(label)}")
    text = label.strip()
    if not text:
        raise ParameterError(f"{where}: the label is empty")
    if len(text) > MAX_LABEL_CHARS:
        raise ParameterError(f"{where}: the label has {len(text):,} characters; at most {MAX_LABEL_CHARS} are allowed")
    if CONTROL_CHARACTERS.search(text):
        raise ParameterError(f"{where}: the label contains a control character (a line break or tab); "
                             "write it on one line")
    return text


def check_value_labels(value_labels) -> dict:
    """The structure of a ``value_labels`` parameter, checked before any data is seen: ``None`` or a mapping
    feature name -> mapping value -> label. Returns a plain copy (labels stripped); raises ParameterError."""
    if value_labels is None:
        return {}
    if not isinstance(value_labels, dict):
        raise ParameterError("value_labels must be a mapping {feature: {value: label}}, got "
                             f"{type(value_labels).__name__}")
    out, total = {}, 0
    for feature, labels in value_labels.items():
        if not isinstance(feature, str):
            raise ParameterError(f"value_labels: feature names are text, got {shown(feature)}")
        if not isinstance(labels, dict):
            raise ParameterError(f"value_labels[{feature!r}] must be a mapping {{value: label}}, got "
                                 f"{type(labels).__name__}")
        total += len(labels)
        if total > MAX_LABELS:
            raise ParameterError(f"value_labels has more than {MAX_LABELS:,} labels; a codebook that large is not "
                                 "a codebook (check the file)")
        checked, spelled = {}, {}
        for value, label in labels.items():
            value = _plain(value)
            if not isinstance(value, (str, numbers.Real)) or (isinstance(value, float) and not math.isfinite(value)):
                raise ParameterError(f"value_labels[{feature!r}]: a value must be text or a finite number, "
                                     f"got {shown(value)}")
            text = check_label(label, f"value_labels[{feature!r}][{shown(value)}]")
            key = (type(value) is bool, normalise_code(value))  # True is not 1 here: a flag is not a code
            if key in spelled and checked[spelled[key]] != text:
                raise ParameterError(f"value_labels[{feature!r}]: {shown(spelled[key])} and {shown(value)} are one "
                                     f"value with two labels ({checked[spelled[key]]!r} and {text!r}); give it one "
                                     "label")
            if key in spelled:
                continue  # the same label twice: one is kept
            spelled[key] = value
            checked[value] = text
        out[feature] = checked
    return out


def match_feature(name: str, categorical: bool, categories: list, labels: dict) -> tuple[dict, list]:
    """One feature's labels keyed as the engine reads its values: the category objects of a categorical feature,
    floats for a numeric one. Returns ``(matched, unknown)``: ``unknown`` lists the keys that name no category /
    are not numbers. A categorical key finds, in this order, the category equal to it (of its type), the one whose
    text is its text (NFC), the one category whose text reads as the same number (two categories ``"2"`` and
    ``"02"`` are two values: neither is found by number). Linear: one pass over the categories, one over the keys."""
    matched, unknown = {}, []
    if categorical:
        by_value, by_text, by_number, ambiguous = {}, {}, {}, set()
        for c in categories:
            plain = _plain(c)
            if not isinstance(plain, str):
                try:
                    by_value.setdefault((type(plain) is bool, plain), c)
                except TypeError:  # an unhashable category: found by its text only
                    pass
            by_text.setdefault(unicodedata.normalize("NFC", str(plain)).strip(), c)
            number = code_number(plain) if not isinstance(plain, bool) else None
            if number is not None:
                if number in by_number and by_number[number] is not c:
                    ambiguous.add(number)
                by_number.setdefault(number, c)
        for key, label in labels.items():
            plain = _plain(key)
            cat = None
            if not isinstance(plain, str):
                try:
                    cat = by_value.get((type(plain) is bool, plain))
                except TypeError:
                    cat = None
            if cat is None:
                cat = by_text.get(unicodedata.normalize("NFC", str(plain)).strip())
            if cat is None and not isinstance(plain, bool):
                number = code_number(plain)
                if number is not None and number not in ambiguous:
                    cat = by_number.get(number)
            if cat is None:
                unknown.append(key)
            else:
                matched[cat] = label
    else:
        for key, label in labels.items():
            number = code_number(key)
            if number is None:
                unknown.append(key)
            else:
                matched[number] = label
    return matched, unknown


def resolve_value_labels(schema, value_labels) -> dict:
    """``value_labels`` matched to the features of ``schema``: feature index -> {value as the engine reads it:
    label}. Unknown features and values that no category is (or a numeric feature's key that is not a number)
    are a ParameterError that names them."""
    checked = check_value_labels(value_labels)
    unknown_features = [f for f in checked if f not in schema.names]
    if unknown_features:
        raise ParameterError(f"value_labels names {_few(unknown_features)}, which "
                             f"{'is not a feature' if len(unknown_features) == 1 else 'are not features'}; the "
                             f"features are {_few(schema.names, 20)}")
    out = {}
    for feature, labels in checked.items():
        i = schema.index(feature)
        f = schema.features[i]
        matched, unknown = match_feature(feature, f.is_categorical, f.categories, labels)
        if unknown:
            what = (f"not categories of {feature!r} (its categories: {_few(f.categories, 12)})" if f.is_categorical
                    else f"not numbers, and {feature!r} is numeric")
            raise ParameterError(f"value_labels[{feature!r}] labels {_few(unknown)}, which are {what}; remove "
                                 "them, or fit on data that has them")
        if matched:
            out[i] = matched
    return out


def check_class_names(class_names, classes: list, task: str | None = None) -> dict:
    """``class_names`` matched to the model's classes (class -> name, the class as the engine holds it).
    A name for a class the model does not output is a ParameterError naming it (and the classes)."""
    if class_names is None:
        return {}
    if not isinstance(class_names, dict):
        raise ParameterError(f"class_names must be a mapping {{class: name}}, got {type(class_names).__name__}")
    if len(class_names) > MAX_LABELS:
        raise ParameterError(f"class_names has more than {MAX_LABELS:,} names")
    if not classes:
        raise ParameterError("class_names name classes, but the model is a regressor (no classes)")
    matched, unknown = match_feature("class", True, list(classes), {_plain(k): v for k, v in class_names.items()})
    if unknown:
        raise ParameterError(f"class_names names {_few(unknown)}, which the model never outputs (its classes: "
                             f"{_few(classes, 20)})")
    return {c: check_label(name, f"class_names[{shown(c)}]") for c, name in matched.items()}


def _few(items, limit: int = 5) -> str:
    items = list(items)
    text = ", ".join(repr(_plain(v)) for v in items[:limit])
    return text + (f" and {len(items) - limit} more" if len(items) > limit else "")


def as_pairs(labels: dict) -> list:
    """A mapping as JSON-safe ``[[value, label], ...]`` (JSON object keys are text only; numbers must stay
    numbers)."""
    return [[_plain(k), v] for k, v in labels.items()]


def from_pairs(pairs, where: str) -> dict:
    """:func:`as_pairs` read back (from an untrusted export): a list of ``[value, label]`` pairs."""
    if not isinstance(pairs, list) or len(pairs) > MAX_LABELS:
        raise SchemaError(f"{where} must be a list of [value, label] pairs (at most {MAX_LABELS:,})")
    out = {}
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], (str, int, float)):
            raise SchemaError(f"{where} must be a list of [value, label] pairs, got {shown(pair)}")
        try:
            out[pair[0]] = check_label(pair[1], where)
        except ParameterError as e:
            raise SchemaError(str(e)) from None
    return out


class DuplicateKey(ValueError):
    """A JSON object names one key twice (a JSON reader would silently keep the last)."""

    def __init__(self, key: str, lines: tuple = ()):
        super().__init__(key)
        self.key, self.lines = key, tuple(lines)

    def words(self, name: str) -> str:
        """The problem in words: the file, the key, where it appears when that can be told, and what to do."""
        lines = sorted(set(self.lines))
        where = (f" (line {lines[0]})" if len(lines) == 1 else f" (lines {lines[0]} and {lines[1]})") if lines else ""
        return (f"{name}: the key {self.key!r} appears twice in one object{where}; a JSON reader would keep only "
                "the last, so give each feature and each value once")


def loads_without_duplicate_keys(text: str):
    """``json.loads(text)``, refusing an object that names one key twice (:class:`DuplicateKey`, with the lines of
    the key's two places when the text holds it exactly twice as a key: otherwise which two of its places collide
    cannot be told without a parser of our own). The one reader of untrusted JSON codebooks and dictionaries."""
    import json  # noqa: PLC0415 - only JSON inputs need it

    def refuse(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                raise DuplicateKey(key)
            out[key] = value
        return out

    try:
        return json.loads(text, object_pairs_hook=refuse)
    except DuplicateKey as exc:
        spelled = re.escape(json.dumps(exc.key, ensure_ascii=False))
        places = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(spelled + r"\s*:", text)]
        raise DuplicateKey(exc.key, tuple(places) if len(places) == 2 else ()) from None

