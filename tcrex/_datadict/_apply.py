"""A dictionary applied to a fit (``TCREx(dictionary=...)``): the one place that turns what the dictionary
declares into the engine's own mechanisms -- column kinds (``categorical_features`` / ``numeric_features``),
the codebook (``value_labels``), special codes (``special_codes``: categories beside the number line), feature
titles, and the actionability constraints (declared, and suggested where the dictionary settles nothing)."""
from __future__ import annotations

from dataclasses import replace

from ..codebook import match_feature
from ..constraints import IMMUTABLE, suggest_constraints
from ..errors import ParameterError
from ..vocabulary import CATEGORICAL, NUMERIC
from ._record import ORDERED, DataDictionary, value_key
from ._suggest import code_question

#: The ``constraints`` parameter's default (None means the same): what the dictionary declares, and the suggested
#: actionability (:func:`tcrex.constraints.suggest_constraints`) for the features it leaves unsettled; free without
#: a dictionary.
AUTO = "auto"


def fit_parameters(dictionary: DataDictionary | None, columns: list, params: dict) -> tuple[dict, list]:
    """The parameters a fit detects the schema with, the dictionary's declarations merged under the explicit ones
    (an explicit parameter wins for the features it names). Returns ``(params, notes)``; ``notes`` say what of the
    dictionary is not used (columns the data does not have)."""
    if dictionary is None:
        return params, []
    out = dict(params)
    names = set(map(str, columns))
    absent = [n for n in dictionary.names if n not in names]
    notes = []
    if absent:
        notes.append(f"the dictionary describes {len(absent)} column(s) that are not features and are left out: "
                     + ", ".join(repr(n) for n in absent[:8]) + (" …" if len(absent) > 8 else ""))
    explicit_cat = set(params.get("categorical_features") or ())
    explicit_num = set(params.get("numeric_features") or ())
    cats = [e.name for e in dictionary.entries if e.name in names and e.kind in (CATEGORICAL, ORDERED)
            and e.name not in explicit_num]
    nums = [e.name for e in dictionary.entries if e.name in names and (e.kind == NUMERIC or (e.codes and e.kind is None))
            and e.name not in explicit_cat]
    if cats:
        out["categorical_features"] = list(dict.fromkeys([*(params.get("categorical_features") or ()), *cats]))
    if nums:
        out["numeric_features"] = list(dict.fromkeys([*(params.get("numeric_features") or ()), *nums]))
    labels = {n: dict(v) for n, v in dictionary.value_labels.items() if n in names}
    labels.update(params.get("value_labels") or {})
    out["value_labels"] = labels or None
    return out, notes


def special_codes_param(schema, dictionary: DataDictionary | None, spec):
    """The ``special_codes`` a fit resolves (``tcrex._engine.base._data.resolve_special_codes``): the
    dictionary's declared codes, then the explicit dict's (which win); the other numeric features detected
    (``"auto"``) or without codes (None)."""
    if dictionary is None:
        return spec
    codes = {n: c for n, c in dictionary.special_codes.items() if n in schema.names}
    if not codes:
        return spec
    if isinstance(spec, dict):
        return {**codes, **spec}
    if spec is None:
        return {**{schema.features[i].name: [] for i in schema.numeric}, **codes}
    return codes


def matched_labels(schema, value_labels) -> tuple[dict, list]:
    """The part of ``value_labels`` that matches ``schema`` (categories the data has, numbers of a numeric feature)
    and a note for what is left out: a dictionary names what a column may hold, a fit's data may lack some."""
    kept, notes = {}, []
    for name, labels in (value_labels or {}).items():
        if name not in schema.names:
            continue
        f = schema.features[schema.index(name)]
        _, unknown = match_feature(name, f.is_categorical, f.categories, labels)
        bad = {value_key(u) for u in unknown}
        if unknown:
            notes.append(f"{name}: {len(unknown)} label(s) for values the data does not have are not used ("
                         + ", ".join(repr(u) for u in unknown[:5]) + (" …" if len(unknown) > 5 else "") + ")")
        good = {v: lab for v, lab in labels.items() if value_key(v) not in bad}
        if good:
            kept[name] = good
    return kept, notes


def with_titles(schema, dictionary: DataDictionary | None):
    """``schema`` with each feature's title from ``dictionary`` (None: no titles)."""
    titles = dictionary.titles if dictionary is not None else {}
    if not titles and not any(getattr(f, "title", None) for f in schema.features):
        return schema
    return type(schema)([replace(f, title=titles.get(f.name)) for f in schema.features])


def fit_constraints(schema, dictionary: DataDictionary | None, spec) -> tuple[dict | None, dict]:
    """The ``constraints`` a fit applies, and ``{feature: reason}`` of the suggested ones it applied.

    * None (the default) or ``"auto"``: with a dictionary, what it declares (a direction, immutable, a history
      column: immutable) and, for every feature it leaves unsettled, the suggestion of
      :func:`tcrex.constraints.suggest_constraints` (names, titles and labels: protected attributes immutable,
      age increase only, history columns immutable except the most recent); without one, none;
    * ``{}``: none at all (every feature free);
    * a dict: exactly it, plus what the dictionary declares for the features it does not name (no suggestion).
    A categorical feature takes only free or immutable (a direction becomes immutable)."""
    if isinstance(spec, dict) and not spec:
        return None, {}
    if spec is None or (isinstance(spec, str) and spec == AUTO):
        if dictionary is None:
            return None, {}
        explicit = {}
    elif isinstance(spec, dict):
        explicit = dict(spec)
    else:
        return spec, {}  # Constraints() says what is wrong with it
    if dictionary is None:
        return explicit, {}
    out, applied = {}, {}
    present = set(schema.names)
    for name, kind in dictionary.constraints.items():
        if name in present and name not in explicit:
            f = schema.features[schema.index(name)]
            out[name] = IMMUTABLE if f.is_categorical and not f.ordered and kind != IMMUTABLE else kind
    if not explicit:
        settled = dictionary.declared
        suggestions = suggest_constraints(schema, schema.value_labels, dictionary.titles)
        for name, s in suggestions.items():
            if name in settled or name in out:
                continue
            out[name] = s["constraint"]
            applied[name] = s["reason"]
    out.update(explicit)
    return out or None, applied


def label_questions(schema) -> list:
    """The questions a fit asks about labelled numbers: a numeric feature whose values are labelled (a codebook
    labelling -2 "no consumption") but that has no special code, declared or detected, may hold codes that are
    kept as numbers -- never silently. Returns ``[(features, values, question)]``, the features with the same
    labelled values asked about together (:func:`tcrex.dictionary.code_question`)."""
    groups: dict = {}
    for f in schema.features:
        if f.is_categorical or not f.labels or f.special_codes:
            continue
        values = tuple(sorted(int(v) if float(v) == int(v) else float(v) for v in f.labels))
        key = (values, tuple(sorted((float(k), v) for k, v in f.labels.items())))
        groups.setdefault(key, []).append(f)
    out = []
    for (values, _), features in groups.items():
        names = [f.name for f in features]
        who = names[0] if len(names) == 1 else ", ".join(names[:6]) + (" …" if len(names) > 6 else "")
        shown = list(values[:8]) + (["…"] if len(values) > 8 else [])
        out.append((names, list(values), code_question(who, shown, features[0].labels)))
    return out


def check_dictionary_param(value) -> DataDictionary | None:
    """The ``dictionary`` parameter as a DataDictionary (ParameterError when it is not one)."""
    from ._record import as_dictionary  # noqa: PLC0415

    try:
        return as_dictionary(value)
    except ParameterError:
        raise
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"dictionary: {exc}") from None
