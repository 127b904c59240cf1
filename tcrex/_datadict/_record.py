"""The records: :class:`FeatureEntry` (what one column means) and :class:`DataDictionary` (all of them), with their
versioned JSON form. Every value here was checked when the record was built, so a reader that returns a record
has applied nothing partly: it raises before it returns."""
from __future__ import annotations

import json
import math
import numbers
import re
from dataclasses import dataclass, field, replace

import numpy as np

from ..codebook import CONTROL_CHARACTERS, MAX_LABELS, check_label, normalise_code
from ..constraints import DECREASE, FREE, IMMUTABLE, INCREASE
from ..vocabulary import CATEGORICAL, NUMERIC
from ..errors import ParameterError, SchemaError
from ..text import shown

#: The JSON document's ``format`` and the version written (older versions are read).
DICTIONARY_FORMAT = "tcrex-dictionary"
DICTIONARY_VERSION = 1
#: Kinds a feature may be declared as (None: detected from the data).
ORDERED = "ordered"
KINDS = (NUMERIC, CATEGORICAL, ORDERED)
#: Actionability a feature may be declared with (None: not declared, so a suggestion may apply; ``"free"``:
#: declared free, so no suggestion applies). Directions are for numeric and ordered features only.
ACTIONABILITY = (FREE, IMMUTABLE, INCREASE, DECREASE)
#: At most this many features in one dictionary (a wide credit-bureau file has a few thousand columns).
MAX_FEATURES = 20_000
#: The longest title and unit (a phrase), and the longest description (a paragraph), in characters.
MAX_TITLE_CHARS = 200
MAX_DESCRIPTION_CHARS = 2_000
#: The longest column name.
MAX_NAME_CHARS = 500
_MARKUP = re.compile(r"<\s*/?\s*[A-Za-z!?]")


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def check_text(text, where: str, limit: int = MAX_TITLE_CHARS, error=ParameterError) -> str:
    """A title, description, unit or label of a dictionary: one line of printable text of at most ``limit``
    characters and no HTML markup (a tag in a title would be drawn by a browser that escapes nothing, and it is
    never what a column means). A formula (``=HYPERLINK(...)``) is kept as text: it is neutralised in every
    spreadsheet export (:mod:`tcrex.spreadsheet`)."""
    try:
        if not isinstance(text, str):
            raise ParameterError(f"{where}: expected text, got {shown(text)}")
        if limit > 200 and len(text.strip()) > limit:
            raise ParameterError(f"{where}: {len(text.strip()):,} characters; at most {limit:,} are allowed")
        value = check_label(text, where) if limit <= 200 else _long_text(text, where)
        if _MARKUP.search(value):
            raise ParameterError(f"{where}: the text holds HTML markup ({shown(value)}); write plain words")
        return value
    except ParameterError as exc:
        raise error(str(exc)) from None


def _long_text(text: str, where: str) -> str:
    value = text.strip()
    if not value:
        raise ParameterError(f"{where}: the text is empty")
    if CONTROL_CHARACTERS.search(value):
        raise ParameterError(f"{where}: the text contains a control character (a line break or tab); write it on "
                             "one line")
    return value


def value_key(value) -> tuple:
    """The identity of a value in a dictionary, by the codebook's one spelling of a value
    (:func:`tcrex.codebook.normalise_code`): numbers by their float value (``1``, ``1.0``, ``"1"`` and ``"−1"``
    against ``-1``), text NFC-normalised and stripped. Two entries of one feature with one key collide."""
    if type(value) is int or type(value) is float:  # the common case, without the abstract-class checks
        return ("number", float(value) + 0.0)
    key = normalise_code(value)
    return ("number", key) if isinstance(key, float) else ("text", str(key))


def _check_value(value, where: str):
    if type(value) is int and abs(value) < 2**53 or type(value) is float and math.isfinite(value):
        return value
    value = _plain(value)
    if isinstance(value, bool) or not isinstance(value, (str, numbers.Real)) or (
            isinstance(value, float) and not math.isfinite(value)):
        raise ParameterError(f"{where}: a value must be text or a finite number, got {shown(value)}")
    if isinstance(value, str):
        value = value.strip()
        if not value or len(value) > MAX_TITLE_CHARS:
            raise ParameterError(f"{where}: a value must be non-empty text of at most {MAX_TITLE_CHARS} characters")
    elif isinstance(value, numbers.Integral) and abs(int(value)) >= 2**53:
        raise ParameterError(f"{where}: the value {shown(value)} is too large to be a code")
    return value


class _Where:
    """Where a label sits, for a message: built into text only when there is a message to write (a 5 MB
    dictionary checks 100,000 labels, and formatting each place up front took a third of the time)."""

    __slots__ = ("feature", "what", "value")

    def __init__(self, feature, what, value):
        self.feature, self.what, self.value = feature, what, value

    def __format__(self, spec) -> str:
        return f"{self.feature!r}: {self.what} of {shown(self.value)}"

    __str__ = __repr__ = lambda self: format(self, "")


def _pairs(items, feature: str, what: str, allow_empty_label: bool) -> tuple:
    if isinstance(items, dict):
        items = list(items.items())
    if not isinstance(items, (list, tuple)):
        raise ParameterError(f"{feature!r}: {what} must be a mapping {{value: label}} or a list of [value, label] "
                             f"pairs, got {type(items).__name__}")
    out, seen = [], {}
    for pair in items:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ParameterError(f"{feature!r}: {what} must be [value, label] pairs, got {shown(pair)}")
        value = _check_value(pair[0], f"{feature!r}: {what}")
        label = pair[1]
        if label is None or (allow_empty_label and isinstance(label, str) and not label.strip()):
            if not allow_empty_label:
                raise ParameterError(f"{feature!r}: {what}: the value {shown(value)} has no label")
            label = None
        else:
            label = check_text(label, _Where(feature, what, value))
        key = value_key(value)
        if key in seen:
            raise ParameterError(f"{feature!r}: {what} name the value {shown(seen[key])} twice (as "
                                 f"{shown(seen[key])} and {shown(value)}, which are one value); give each value "
                                 "one entry")
        seen[key] = value
        out.append((value, label))
    return tuple(out)


@dataclass(frozen=True)
class FeatureEntry:
    """What one column means. Every field is optional but the name.

    * ``title`` ("repayment status last month") and ``description``: what people read instead of the column name;
    * ``kind``: ``"numeric"``, ``"categorical"`` or ``"ordered"`` (categories in ``order``); None: detected;
    * ``unit`` ("EUR", "months");
    * ``labels``: ``((value, label), ...)`` for ordinary values (categories, or values of a number);
    * ``codes``: ``((value, meaning or None), ...)``: values of a numeric column that are codes, not numbers
      (-2 "no consumption that month"): categories beside the number line (``TCREx(special_codes=...)``);
    * ``actionability``: ``"free"``, ``"immutable"``, ``"increase_only"``, ``"decrease_only"``, or None (not
      declared: a suggestion may apply; ``"free"`` declares that none does);
    * ``history``: the column describes the past (a month of a repayment history): immutable unless declared
      otherwise.
    """

    name: str
    title: str | None = None
    description: str | None = None
    kind: str | None = None
    unit: str | None = None
    labels: tuple = ()
    codes: tuple = ()
    order: tuple = ()
    actionability: str | None = None
    history: bool = False

    def __post_init__(self):
        name = self.name
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
            raise ParameterError(f"a dictionary entry needs a column name (text of at most {MAX_NAME_CHARS} "
                                 f"characters), got {shown(name)}")
        set_ = object.__setattr__
        for attr, limit in (("title", MAX_TITLE_CHARS), ("description", MAX_DESCRIPTION_CHARS),
                            ("unit", MAX_TITLE_CHARS)):
            value = getattr(self, attr)
            set_(self, attr, None if value is None else check_text(value, f"{name!r}: the {attr}", limit))
        if self.kind is not None and self.kind not in KINDS:
            raise ParameterError(f"{name!r}: kind must be one of {', '.join(KINDS)}, got {shown(self.kind)}")
        kind = self.actionability
        if kind in ("increase", "decrease"):
            kind += "_only"
        if kind is not None and kind not in ACTIONABILITY:
            raise ParameterError(f"{name!r}: actionability must be one of {', '.join(ACTIONABILITY)}, got "
                                 f"{shown(kind)}")
        if kind in (INCREASE, DECREASE) and self.kind == CATEGORICAL:
            raise ParameterError(f"{name!r} is categorical without an order: it may be free or immutable, never "
                                 f"{kind.replace('_', ' ')} (declare it ordered, with its order, for a direction)")
        set_(self, "actionability", kind)
        if not isinstance(self.history, bool):
            raise ParameterError(f"{name!r}: history must be true or false, got {shown(self.history)}")
        labels = _pairs(self.labels, name, "labels", False)
        codes = _pairs(self.codes, name, "special codes", True)
        if codes and self.kind in (CATEGORICAL, ORDERED):
            raise ParameterError(f"{name!r} is {self.kind}: its values are categories already; special codes are "
                                 "for numeric features (label the category instead)")
        if len(codes) > 16:
            raise ParameterError(f"{name!r} declares {len(codes)} special codes; at most 16 are supported")
        for value, _ in codes:
            if isinstance(value, str) and value_key(value)[0] == "text":
                raise ParameterError(f"{name!r}: the special code {shown(value)} is not a number (special codes are "
                                     "values of a numeric column)")
        both = {value_key(v) for v, _ in labels} & {value_key(v) for v, _ in codes}
        if both:
            raise ParameterError(f"{name!r}: {shown(sorted(both)[0][1])} is both a labelled value and a special "
                                 "code; declare it once (as a code, with its meaning)")
        order = tuple(_check_value(v, f"{name!r}: order") for v in (self.order or ()))
        if len({value_key(v) for v in order}) != len(order):
            raise ParameterError(f"{name!r}: the order names a category twice")
        if order and self.kind not in (ORDERED, None):
            raise ParameterError(f"{name!r}: an order is for ordered categories (kind 'ordered'), not {self.kind}")
        set_(self, "labels", labels)
        set_(self, "codes", tuple((_number(v), m) for v, m in codes))
        set_(self, "order", order)

    # ------------------------------------------------------------------ views
    @property
    def special_codes(self) -> list:
        """The special codes, as numbers (whole numbers as int), ascending."""
        return sorted(v for v, _ in self.codes)

    @property
    def value_labels(self) -> dict:
        """Every label of the feature's values, the codes' meanings included: ``{value: label}``."""
        out = {v: label for v, label in self.labels}
        out.update((v, m) for v, m in self.codes if m)
        return out

    def is_empty(self) -> bool:
        """Declares nothing at all (an "explicit empty entry" still switches suggested actionability off)."""
        return self == FeatureEntry(self.name)

    def to_dict(self) -> dict:
        out = {"name": self.name}
        for attr in ("title", "description", "kind", "unit", "actionability"):
            if getattr(self, attr) is not None:
                out[attr] = getattr(self, attr)
        if self.labels:
            out["labels"] = [[v, label] for v, label in self.labels]
        if self.codes:
            out["codes"] = [[v, m] for v, m in self.codes]
        if self.order:
            out["order"] = list(self.order)
        if self.history:
            out["history"] = True
        return out

    @classmethod
    def from_dict(cls, d, error=SchemaError) -> "FeatureEntry":
        if not isinstance(d, dict):
            raise error(f"a dictionary feature must be an object, got {shown(d)}")
        unknown = set(d) - {"name", "title", "description", "kind", "unit", "labels", "codes", "order",
                            "actionability", "history"}
        if unknown:
            raise error(f"feature {shown(d.get('name'))}: unknown key(s) {', '.join(sorted(map(str, unknown))[:5])}")
        try:
            return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()})
        except (ParameterError, TypeError) as exc:
            raise error(str(exc)) from None


def _number(value):
    v = float(value_key(value)[1])
    return int(v) if v == int(v) and abs(v) < 2**53 else v


@dataclass(frozen=True)
class DataDictionary:
    """The data dictionary: one :class:`FeatureEntry` per described column, in order (a column it does not
    describe has no entry). Build it with :meth:`from_entries`, a reader (:func:`tcrex.dictionary.read_dictionary`)
    or :meth:`from_parts` (the engine's old parameters); it is plain data with a versioned JSON form."""

    entries: tuple = ()
    class_names: tuple = field(default=())  # ((class, name), ...) when the file names the label column's classes

    def __post_init__(self):
        entries = tuple(self.entries)
        if len(entries) > MAX_FEATURES:
            raise ParameterError(f"the dictionary describes {len(entries):,} columns; at most {MAX_FEATURES:,} are "
                                 "allowed")
        seen, total = set(), 0
        for e in entries:
            if not isinstance(e, FeatureEntry):
                raise ParameterError(f"a dictionary holds FeatureEntry records, got {type(e).__name__}")
            if e.name in seen:
                raise ParameterError(f"the dictionary describes {e.name!r} twice; describe each column once")
            seen.add(e.name)
            total += len(e.labels) + len(e.codes)
            if total > MAX_LABELS:
                raise ParameterError(f"the dictionary has more than {MAX_LABELS:,} labels and codes; a dictionary "
                                     "that large is not a dictionary (check the file)")
        object.__setattr__(self, "entries", entries)
        object.__setattr__(self, "class_names", _pairs(self.class_names, "class names", "names", False)
                           if self.class_names else ())

    # ------------------------------------------------------------------ building
    @classmethod
    def from_entries(cls, entries) -> "DataDictionary":
        return cls(tuple(entries))

    @classmethod
    def from_parts(cls, value_labels=None, special_codes=None, titles=None) -> "DataDictionary":
        """A dictionary from the engine's shorthands: a codebook ``{feature: {value: label}}``, declared special
        codes ``{feature: [codes]}`` (labels of a code become its meaning) and titles ``{feature: title}``."""
        names = list(dict.fromkeys([*(value_labels or {}), *(special_codes or {}), *(titles or {})]))
        entries = []
        for name in names:
            labels = dict((value_labels or {}).get(name) or {})
            codes = []
            for c in (special_codes or {}).get(name) or []:
                meaning = next((lab for v, lab in labels.items() if value_key(v) == value_key(c)), None)
                labels = {v: lab for v, lab in labels.items() if value_key(v) != value_key(c)}
                codes.append((c, meaning))
            entries.append(FeatureEntry(str(name), title=(titles or {}).get(name), labels=tuple(labels.items()),
                                        codes=tuple(codes)))
        return cls(tuple(entries))

    def replace_entry(self, entry: FeatureEntry) -> "DataDictionary":
        """The dictionary with ``entry`` in place of the entry of its name (appended when new)."""
        entries = [entry if e.name == entry.name else e for e in self.entries]
        if entry.name not in self.names:
            entries.append(entry)
        return replace(self, entries=tuple(entries))

    def merged(self, other: "DataDictionary") -> "DataDictionary":
        """This dictionary with ``other``'s entries in place of (or beside) its own: what ``other`` declares wins."""
        out = self
        for e in other.entries:
            out = out.replace_entry(e)
        if other.class_names:
            out = replace(out, class_names=other.class_names)
        return out

    # ------------------------------------------------------------------ views
    @property
    def names(self) -> list:
        return [e.name for e in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, name) -> bool:
        return name in self.names

    def get(self, name) -> FeatureEntry | None:
        return next((e for e in self.entries if e.name == name), None)

    def __getitem__(self, name) -> FeatureEntry:
        entry = self.get(name)
        if entry is None:
            raise KeyError(name)
        return entry

    @property
    def titles(self) -> dict:
        """``{feature: title}`` of the titled features."""
        return {e.name: e.title for e in self.entries if e.title}

    @property
    def value_labels(self) -> dict:
        """The codebook this dictionary implies, ``{feature: {value: label}}`` (codes' meanings included)."""
        return {e.name: e.value_labels for e in self.entries if e.value_labels}

    @property
    def special_codes(self) -> dict:
        """``{feature: [codes]}`` of the features declaring codes."""
        return {e.name: e.special_codes for e in self.entries if e.codes}

    def kinds(self, kind: str) -> list:
        return [e.name for e in self.entries if e.kind == kind]

    @property
    def constraints(self) -> dict:
        """The actionability this dictionary declares, as a ``constraints=`` dict: the declared kinds, and
        ``"immutable"`` for a history column that declares none. Free entries are left out."""
        out = {}
        for e in self.entries:
            kind = e.actionability or (IMMUTABLE if e.history else None)
            if kind not in (None, FREE):
                out[e.name] = kind
        return out

    @property
    def declared(self) -> set:
        """Names whose actionability is settled by the dictionary (declared, a history flag, or an explicit empty
        entry): no suggested actionability applies to them."""
        return {e.name for e in self.entries if e.actionability is not None or e.history or e.is_empty()}

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        out = {"format": DICTIONARY_FORMAT, "version": DICTIONARY_VERSION, "features": [e.to_dict() for e in self.entries]}
        if self.class_names:
            out["class_names"] = [[v, n] for v, n in self.class_names]
        return out

    def to_json(self, indent=None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, doc, error=SchemaError) -> "DataDictionary":
        if not isinstance(doc, dict) or doc.get("format") != DICTIONARY_FORMAT:
            raise error(f"not a {DICTIONARY_FORMAT} document (its \"format\" must be {DICTIONARY_FORMAT!r})")
        version = doc.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= DICTIONARY_VERSION:
            raise error(f"{DICTIONARY_FORMAT} version {shown(version)} is not one this tcrex reads (it reads 1 to {DICTIONARY_VERSION}); "
                        "upgrade tcrex to read a newer file")
        unknown = set(doc) - {"format", "version", "features", "class_names"}
        if unknown:
            raise error(f"{DICTIONARY_FORMAT}: unknown key(s) {', '.join(sorted(map(str, unknown))[:5])}")
        features = doc.get("features", [])
        if not isinstance(features, list):
            raise error(f"{DICTIONARY_FORMAT}: \"features\" must be a list of objects")
        if len(features) > MAX_FEATURES:
            raise error(f"the dictionary describes {len(features):,} columns; at most {MAX_FEATURES:,} are allowed")
        entries = tuple(FeatureEntry.from_dict(d, error) for d in features)
        try:
            return cls(entries, class_names=tuple(map(tuple, doc.get("class_names") or ())))
        except (ParameterError, TypeError) as exc:
            raise error(str(exc)) from None


def as_dictionary(value, where: str = "dictionary") -> DataDictionary | None:
    """The ``dictionary=`` parameter as a :class:`DataDictionary`: None, a DataDictionary, its dict form, or a
    codebook-shaped mapping ``{feature: {value: label}}``."""
    if value is None or isinstance(value, DataDictionary):
        return value
    if isinstance(value, dict) and value.get("format") == DICTIONARY_FORMAT:
        return DataDictionary.from_dict(value, ParameterError)
    if isinstance(value, dict):
        return DataDictionary.from_parts(value_labels=value)
    raise ParameterError(f"{where} must be a tcrex.dictionary.DataDictionary (read one with "
                         f"tcrex.dictionary.read_dictionary), got {type(value).__name__}")
