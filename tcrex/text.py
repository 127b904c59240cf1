"""Plain-language rendering of conditions, in the user's column names and category values.

The one renderer of numbers, conditions and recourse sentences: the explainer, its views (rules and metarules
frames), the JSON export, target descriptions and, through them, the figures, reports and the dashboard use these
functions, so a printed bound is always true of the value it prints (``format_number`` never rounds a bound
across a value). :func:`box_conditions` is the one walk from a rule or metarule box to its conditions;
:func:`status_sentence` writes the sentence of every explanation status.
"""
from __future__ import annotations

import math
import numbers
from decimal import Decimal

import numpy as np

from .vocabulary import (ALREADY_IN_RULE, ALREADY_IN_TARGET, EXAMPLE, MINIMAL_CHANGE, NEXT_RULE, NO_ACTIONABLE_RULE,
                         NO_RULE, REGRESSION, SEARCHED)


def format_number(v) -> str:
    if v is None:
        return "?"
    v = float(v)
    if not math.isfinite(v):
        return str(v)
    if abs(v) < 1e15 and v == int(v):
        return str(int(v))
    text = f"{v:.6g}"
    # a printed bound must be true of the values it prints: when 6 digits would move the number (a float32
    # threshold 0.58499998 is not 0.585), print the shortest text that reads back as exactly this float
    return text if float(text) == v else repr(v)


def format_difference(a, b) -> str:
    """``a - b`` as text, computed on the printed numbers (``format_number`` of each), so "0.3 → ≤ 0.1, by 0.2"
    holds of what is printed (float subtraction would say 0.19999999999999998)."""

    return format_number(float(Decimal(format_number(a)) - Decimal(format_number(b))))


def integer_range(low: float, high: float) -> tuple[float, float]:
    """For an integer feature, the whole numbers in ``(low, high]``: ``(first, last)`` (inf when open)."""
    first = math.floor(low) + 1 if np.isfinite(low) else -np.inf
    last = math.floor(high) if np.isfinite(high) else np.inf
    return first, last


#: At most this many labelled values a range names ("including …"); the rest are counted.
RANGE_LABELS = 3


def numeric_condition(low: float, high: float, integer: bool, labels=None, special_codes=()) -> str:
    """``(low, high]`` as text without the feature name: "≤ 40", "> 25.5", "in (40, 51]", "≥ 5"; a single value
    through :func:`value_text` ("= no delinquency on record (-7)" when the codebook labels it). A range that holds
    special codes (``special_codes``, the feature's: −9 "no bureau record") names them, in the dictionary's words
    where it labels them: "≤ -7 (including no bureau record (-9) and no delinquency on record (-7))", "≤ 1
    (including codes -2 and -1)" — a code is not a quantity, so "≤ -7" alone would hide what it holds. An
    ordinary labelled value is not named: "≤ 1" holds 0 "no late payments on record" as plainly as it holds 1."""
    text = _range_text(low, high, integer, labels)
    if not len(special_codes) or text.startswith("= ") or text == "any value":
        return text
    inside = sorted({float(c) for c in special_codes if low < float(c) <= high})
    if not inside:
        return text
    labelled = [v for v in inside if labels and labels.get(v) is not None]
    if len(labelled) == len(inside):
        named = [value_text(v, labels) for v in inside[:RANGE_LABELS]]
        if len(inside) > RANGE_LABELS:
            named.append(pluralise(len(inside) - RANGE_LABELS, "more labelled code"))
        return f"{text} (including {join_and(named)})"
    shown = [value_text(v, labels) for v in inside[:RANGE_LABELS]]
    if len(inside) > RANGE_LABELS:
        shown.append(pluralise(len(inside) - RANGE_LABELS, "more code"))
    return f"{text} (including {'the code' if len(inside) == 1 else 'codes'} {join_and(shown)})"


def _range_text(low: float, high: float, integer: bool, labels=None) -> str:
    if integer:
        first, last = integer_range(low, high)
        if np.isfinite(first) and np.isfinite(last):
            if first == last:
                return f"= {value_text(float(first), labels)}"
            if first < last:
                return f"in [{format_number(first)}, {format_number(last)}]"
        elif np.isfinite(first):
            return f"≥ {format_number(first)}"
        elif np.isfinite(last):
            return f"≤ {format_number(last)}"
    if not np.isfinite(low) and not np.isfinite(high):
        return "any value"
    if not np.isfinite(low):
        return f"≤ {format_number(high)}"
    if not np.isfinite(high):
        return f"> {format_number(low)}"
    return f"in ({format_number(low)}, {format_number(high)}]"


def value_text(value, labels=None) -> str:
    """A data value as advice states it: "no checking account (A14)" when the codebook labels it (the label a
    person reads, then the code the data holds), else the value itself ("A14", "5"). The one renderer of a value
    in sentences, frames and figures. ``labels``: value -> label as the engine reads values (a categorical
    feature's categories, a numeric feature's floats: ``tcrex.codebook`` matches them); None for no labels."""
    if isinstance(value, np.generic):
        value = value.item()
    plain = output_text(value)
    if labels:
        try:  # equal numbers hash alike, so -7 finds a numeric feature's key -7.0
            label = labels.get(value)
        except TypeError:  # an unhashable value: no label
            label = None
        if label is not None and label != plain:
            return f"{label} ({plain})"
    return plain


def categorical_condition(allowed: np.ndarray, categories: list, labels=None) -> str:
    """An allowed-category mask as text: "= Married", "in {A, B}", "≠ Private", "not in {A, B}" (each category
    through :func:`value_text`, so a labelled one reads "no checking account (A14)")."""
    yes = [value_text(c, labels) for c, a in zip(categories, allowed) if a]
    no = [value_text(c, labels) for c, a in zip(categories, allowed) if not a]
    if not no:
        return "any value"
    if len(yes) == 1:
        return f"= {yes[0]}"
    if len(no) < len(yes):
        return f"≠ {no[0]}" if len(no) == 1 else "not in {" + ", ".join(no) + "}"
    return "in {" + ", ".join(yes) + "}"


def feature_text(name, title=None) -> str:
    """A feature as people read it: its title from the data dictionary with the column name after it
    ("repayment status last month (status_1)"), or the column name alone when it has no title. Every sentence,
    table and figure that names a feature on its own names it through this function."""
    name = str(name)
    if title is None or not str(title).strip() or str(title).strip() == name:
        return name
    return f"{str(title).strip()} ({name})"


def change_phrase(name: str, condition: str, verb: str = "to") -> str:
    """A condition as the place to move a feature to: "age to ≥ 5", "MaritalStatus to Married", "age to a value
    from 5 to 8" (for "in [5, 8]"), "x to a value above 1.5 and at most 3" (for "in (1.5, 3]"), "colour to one of
    {red, blue}". ``verb="were"`` reads as a hypothesis instead: "age were in [5, 8]", "MaritalStatus were
    Married"."""
    if condition.startswith("= "):
        return f"{name} {verb} {condition[2:]}"
    if condition.startswith("≠ "):
        return f"{name} {verb} anything but {condition[2:]}"
    if verb != "to":
        return f"{name} {verb} {condition}"
    if condition.startswith("in [") and condition.endswith("]") and ", " in condition:
        low, high = condition[4:-1].split(", ", 1)
        return f"{name} to a value from {low} to {high}"
    if condition.startswith("in (") and condition.endswith("]") and ", " in condition:
        low, high = condition[4:-1].split(", ", 1)
        return f"{name} to a value above {low} and at most {high}"
    if condition.startswith("in {"):
        return f"{name} to one of {condition[3:]}"
    if condition.startswith("not in {"):
        return f"{name} to anything outside {condition[7:]}"
    return f"{name} to {condition}"


def pluralise(n, noun: str, plural: str | None = None) -> str:
    """"1 individual", "2 individuals", "1,234 rows": a count with its noun in the right number (``plural`` for
    irregular nouns: ``pluralise(2, "person", "people")``)."""
    count = int(n)
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def framed_alternative(text: str) -> str:
    """A metacounterfactual's sentence ("If income were 35.1: change debt_to_income to 0.24 …") framed for the
    person it is about: the "if" part is their past, not advice ("Had income been 35.1 (not something you can
    change now), the advice would be: change debt_to_income to 0.24 …"). A sentence of another shape is returned
    as it is; the paper's own wording stays in ``paper_text``."""
    text = str(text)
    if not text.startswith("If ") or ": " not in text:
        return text
    head, rest = text[3:].split(": ", 1)

    def had(part: str) -> str:  # "income were 35.1" / "status_1 ≥ 2" -> "income been 35.1" / "status_1 been ≥ 2"
        if " were " in part:
            return part.replace(" were ", " been ", 1)
        name, _, rest = part.partition(" ")
        return f"{name} been {rest}" if rest else part
    head = " and ".join(", ".join(had(p) for p in chunk.split(", ")) for chunk in head.split(" and "))
    return f"Had {head} (not something you can change now), the advice would be: {rest}"


#: The label of every rule-only figure once a model checked the advice (the report, the Individual page): a
#: secondary place, never a headline.
RULES_ALONE = "what the rules alone say, not checked on the model"


def rule_changes_text(sparsity) -> str:
    """A metarule's worst-case changes as trees, outlines and summaries say them: the rules' own figure, said as
    such, and never "0 changes" -- a region inside its rule holds people the model may still reject ("inside the
    rule (the rules alone ask nothing)")."""
    n = int(sparsity)
    if n <= 0:
        return "inside the rule (the rules alone ask nothing)"
    return f"the rules alone ask up to {pluralise(n, 'change')}"


def format_value(v) -> str:
    """A single data value as a reader sees it in a message: plain numbers (``5``, not ``np.int64(5)``), text in
    quotes, missing as "missing"."""
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "missing"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, (int, float)):
        return format_number(v)
    if isinstance(v, str):
        return repr(v)
    return str(v)


def join_and(parts: list[str]) -> str:
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def rule_label(number: int) -> str:
    """The public id of the ``number``-th rule of an explainer (1-based, counted over every target in order):
    "R1", "R2", … — the one format of rule ids; :meth:`tcrex.TCREx.rule_id` numbers the rules."""
    return f"R{int(number)}"


def metarule_label(number: int) -> str:
    """The public id of the ``number``-th metarule of an explainer (1-based, counted over every target in order):
    "M1", "M2", … — the one format of metarule ids, numbered like rules; :meth:`tcrex.TCREx.metarule_id`."""
    return f"M{int(number)}"


def class_label(value, names=None) -> str | None:
    """The readable name of a class label from ``names`` (a mapping such as ``{1: "approved"}`` or a callable),
    or None when it has none. numpy scalars and their text form are looked up too (``np.int64(1)``, ``"1"``)."""
    if names is None:
        return None
    if callable(names):
        out = names(value)
        return None if out is None else str(out)
    plain = value.item() if isinstance(value, np.generic) else value
    for key in (plain, str(plain)):
        try:
            if key in names:
                return str(names[key])
        except TypeError:  # an unhashable label: no name
            return None
    by_text = {str(k): v for k, v in names.items()}
    return str(by_text[str(plain)]) if str(plain) in by_text else None


def outcome_text(classes, names=None) -> str:
    """A set of class labels in words: their names when ``names`` knows every one ("approved", "A or B"), else
    the engine's form ("output = 1", "output in {1, 2}")."""
    named = [class_label(c, names) for c in classes]
    if names is not None and named and all(n is not None for n in named):
        return " or ".join(named)
    if len(classes) == 1:
        return f"output = {classes[0]}"
    return "output in {" + ", ".join(map(str, classes)) + "}"


def class_text(value, names=None) -> str:
    """One class label as people read it: its name from ``names`` (:func:`class_label`), else the label itself
    (a numpy scalar as its plain value: ``1``, not ``np.int64(1)``)."""
    name = class_label(value, names)
    return name if name is not None else str(value.item() if isinstance(value, np.generic) else value)


def interval_text(low, high) -> str:
    """A regression target ``(low, high]`` in words: "output > 5.818", "output ≤ 150", "output in (50, 120]" (bounds
    printed exactly by :func:`format_number`, so a printed bound is true of the outputs it speaks of)."""
    if low is None:
        return f"output ≤ {format_number(high)}"
    if high is None:
        return f"output > {format_number(low)}"
    return f"output in ({format_number(low)}, {format_number(high)}]"


#: How an ordered class target reads: ``{"at_least": 7}`` is "7 or better" (higher labels better), ``{"at_most": 2}``
#: "2 or lower" (lower labels better, e.g. a risk grade): one wording for the dashboard, the texts and the docs.
ORDERED_WORDS = {"at_least": "or better", "at_most": "or lower"}


def ordered_text(kind: str, bound, names=None) -> str:
    """An ordered class target in words: "7 or better" (``kind`` "at_least"), "2 or lower" ("at_most")."""
    return f"{class_text(bound, names)} {ORDERED_WORDS[kind]}"


def target_text(classes=None, interval=None, names=None, ordered_classes=None) -> str:
    """A target (the outcome Y*: ``classes``, or a regression ``interval`` ``(low, high)``) in words -- the one
    wording of a target. Classes by their names (:func:`outcome_text`); given ``ordered_classes`` (every class of
    the model in ascending order, when its labels are ordered numbers: :func:`tcrex.ordered_labels`), a top or
    bottom run of them reads "7 or better" / "2 or lower"."""
    if classes is None:
        return interval_text(*interval)
    chosen = list(classes)
    if ordered_classes is not None and 1 < len(chosen) < len(ordered_classes):
        order = list(ordered_classes)
        if order[-len(chosen):] == sorted(chosen, key=float):
            return ordered_text("at_least", order[-len(chosen)], names)
        if order[:len(chosen)] == sorted(chosen, key=float):
            return ordered_text("at_most", order[len(chosen) - 1], names)
    return outcome_text(chosen, names)


def target_spec_text(spec, task: str | None, names=None) -> str:
    """A ``target`` parameter (a spec: None, a class, classes, ``{"at_least": c}``, a threshold or an interval) in
    words: the favourable outcome, or both directions (the paper's default)."""
    if isinstance(spec, dict):  # an ordered class target {"at_least": 7}
        (kind, bound), = spec.items()
        return ordered_text(kind, bound, names)
    if spec is None:
        return ("both directions: each individual toward the other class (paper)" if task != REGRESSION
                else "both directions: each output across the mean (paper)")
    if task == REGRESSION:
        if isinstance(spec, (tuple, list)):
            return interval_text(*spec)
        return f"both directions across {format_number(spec)}"
    if isinstance(spec, (tuple, list)):
        return " or ".join(class_text(c, names) for c in spec)
    return class_text(spec, names)


def recourse_sentence(changes: list[str], keeps: list[str]) -> str:
    """"Change A to … and B to …, while keeping C in … and D ≤ …"."""
    if not changes:
        return "No change needed" + ("; keep " + join_and(keeps) if keeps else "")
    text = "Change " + join_and(changes)
    if keeps:
        text += ", while keeping " + join_and(keeps)
    return text


def lower_first(text: str) -> str:
    """A sentence continued after a colon: its first letter in lower case."""
    return text[0].lower() + text[1:] if text else text


# ---------------------------------------------------------------------------------------- boxes as conditions
def box_conditions(schema, boxes, r: int, *, text: bool = True) -> dict:
    """The features box ``r`` of ``boxes`` constrains, in the user's terms: feature index -> ``{"text",
    "bounds"}``, where ``bounds`` is ``{"in": [allowed categories]}`` or ``{"low", "high"}`` (None where open).

    The one walk from a box to its conditions: sentences, the rules and metarules frames, the structured views
    and the JSON export all read it. ``text=False`` leaves out the ``"text"`` (the export needs only bounds)."""
    out = {}
    for i, f in enumerate(schema.features):
        slot = schema.slot[i]
        if f.is_categorical:
            allowed = boxes.allowed[slot][r]
            if allowed.all():
                continue
            cond = {"bounds": {"in": [c for c, a in zip(f.categories, allowed) if a]}}
            if text:
                cond["text"] = categorical_condition(allowed, f.categories, f.labels)
        else:
            low, high = float(boxes.low[r, slot]), float(boxes.high[r, slot])
            if not (math.isfinite(low) or math.isfinite(high)):
                continue
            cond = {"bounds": {"low": low if math.isfinite(low) else None,
                               "high": high if math.isfinite(high) else None}}
            if text:
                cond["text"] = numeric_condition(low, high, f.integer, f.labels, f.special_codes)
        out[i] = cond
    return out


def box_text(schema, boxes, r: int) -> str:
    """Box ``r`` as one condition text: "age ≥ 30 and income > 20.5" ("any input" when it constrains nothing)."""
    conds = box_conditions(schema, boxes, r)
    if not conds:
        return "any input"
    return join_and([f"{feature_text(schema.names[i], schema.features[i].title)} {c['text']}"
                     for i, c in conds.items()])


# ---------------------------------------------------------------------------------------- sentences
#: What a metarule or metacounterfactual says when the constraints allow no rule there.
NO_ACTIONABLE_RECOURSE = "No actionable recourse under the constraints"


def named(entry: dict) -> str:
    """The feature of a change or keep entry as texts name it (:func:`feature_text` of its ``"feature"`` and its
    optional ``"title"``, the data dictionary's)."""
    return feature_text(entry["feature"], entry.get("title"))


def titled(entry: dict, title) -> dict:
    """``entry`` with the feature's ``"title"`` when it has one (entries of untitled features stay as they were)."""
    if title:
        entry["title"] = title
    return entry


def keep_phrase(entry: dict) -> str:
    """A feature to keep as it is: "income > 20.5" (``entry``: ``{"feature", "condition"}``, and ``"title"``
    when the data dictionary titles it: "monthly income (income) > 20.5")."""
    return f"{named(entry)} {entry['condition']}"


def change_keep_sentence(changes: list, keeps: list) -> str:
    """:func:`recourse_sentence` of change and keep entries (``{"feature", "condition", ...}`` dicts)."""
    return recourse_sentence([change_phrase(named(c), c["condition"]) for c in changes],
                             [keep_phrase(k) for k in keeps])


def status_sentence(status: str, *, changes: list = (), keeps: list = (), target: str = "", tau=None,
                    constraints: str = "") -> str:
    """The sentence of an explanation with ``status`` (see :data:`tcrex.vocabulary.STATUSES`).

    ``changes`` / ``keeps`` are the rule's change and keep entries (statuses ``ok`` and ``already_in_rule``),
    ``target`` and ``tau`` describe what no rule reaches (``no_rule``), ``constraints`` the constraints that
    forbid every rule (``no_actionable_rule``)."""
    if status == ALREADY_IN_TARGET:
        return "The model output is already in the target; no change needed"
    if status == NO_RULE:
        return f"No valid rule reaches {target} at tau={tau}; lower tau or rho to find recourse"
    if status == NO_ACTIONABLE_RULE:
        return f"No actionable recourse: every rule would need a change the constraints forbid ({constraints})"
    if status == ALREADY_IN_RULE:
        if not keeps:  # a rule without any condition (see is_trivial_rule): "inside it" would read as advice
            return ("No change suggested: the recommended rule has no condition (it covers every input), "
                    "although the model output is not in the target")
        return ("Already inside the recommended rule although the model output is not in the target, keeping "
                + join_and([keep_phrase(k) for k in keeps]))
    return change_keep_sentence(changes, keeps)


def if_sentence(condition: str, then: str) -> str:
    """"If <condition>: <then, first letter lowered>" (metarules and metacounterfactuals)."""
    return f"If {condition}: {lower_first(then)}"


def metacounterfactual_sentence(metachanges: list, changes: list, keeps: list, actionable: bool = True) -> str:
    """"If A were … and B were …: change C to …, while keeping …" for a nearby metarule (paper §6.2)."""
    condition = join_and([change_phrase(named(c), c["condition"], verb="were") for c in metachanges])
    return if_sentence(condition, change_keep_sentence(changes, keeps) if actionable else NO_ACTIONABLE_RECOURSE)


#: What a rule without any condition reads as (its box is unbounded on every feature).
NO_CONDITION = "any input"


def is_trivial_rule(complexity) -> bool:
    """A rule is trivial when it has no condition (complexity 0): it covers every input, so it says what the model
    mostly outputs, not what anyone should change; individuals it is recommended to are told "no change needed"
    although the model does not give them the outcome."""
    return int(complexity) == 0


def trivial_rule_note(outcome: str, accuracy: float) -> str:
    """How a trivial rule is flagged wherever rules are listed (dashboard, report, text summary)."""
    return (f"no condition: the rule covers every input and the model gives {outcome} to {accuracy:.0%} of them, "
            "so it describes the model and is not advice")


# ---------------------------------------------------------------------------------------- verified recourse
def output_text(value) -> str:
    """A model output in a sentence: class labels as they are ("rejected", "1"), numbers as format_number."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return format_number(value)
    return str(value)


def _moves(changes: list) -> str:
    return join_and([f"{named(c)} to {c['value']}" for c in changes])


def verified_sentence(source: str | None, changes: list, keeps: list = (), *, rule_id: str | None = None,
                      paper_rule_id: str | None = None, nearest_output=None, target: str = "",
                      reference_rows: bool = True, max_changes: int | None = None) -> str:
    """The sentence of a verified point, naming every feature the point changes and the value it states.

    ``changes``: ``{"feature", "value" (text), "condition" (the rule's, text or None), "nearest" (the rule's
    nearest value, text or None)}`` in feature order; ``keeps``: the rule's keep entries. ``source`` is one of
    :data:`tcrex.vocabulary.SOURCES` (None: nothing found). ``nearest_output``: the model's output at the rule's nearest
    point, said when the point had to go further inside ("at 13 the model still gives rejected").
    ``reference_rows=False``: the explainer held no reference rows (restored from JSON and given none), so nothing
    was searched beyond the rules, and the sentence says that rather than that no reference row reaches the target.
    ``max_changes``: the most features advice may change, said when nothing was found ("within 3 changes")."""
    within = f" within {pluralise(max_changes, 'change')}" if max_changes is not None else ""
    if source is None and not reference_rows:
        return (f"No verified recourse found{within}: no rule has a point the model confirms, and this explainer "
                "holds no reference rows to search beyond the rules (it was restored from JSON; give it the rows it "
                "was fitted on as reference rows)")
    if source is None:
        return (f"No verified recourse found{within}: no rule has a point the model confirms and no reference row "
                f"reaches {target or 'the target'}")
    if source == EXAMPLE:
        return (f"No verified recourse found{within}; a similar case that gets {target or 'the target outcome'} "
                "differs in "
                f"{pluralise(len(changes), 'feature')}: "
                + join_and([f"{named(c)} = {c['value']}" for c in changes]))
    if source == MINIMAL_CHANGE:
        return "No rule gives verified recourse here; a change that works: " + _moves(changes)
    text = "Change " + _moves(changes)
    deeper = [c for c in changes if c.get("nearest") is not None and c["nearest"] != c["value"]]
    if deeper and source in (SEARCHED, NEXT_RULE):
        asks = join_and([(f"{named(c)} " if len(changes) > 1 else "") + c["condition"] for c in changes
                         if c.get("condition")])
        at = join_and([(f"{named(c)} = " if len(changes) > 1 else "") + c["nearest"] for c in changes])
        note = f"the rule asks {asks}" if asks else ""
        if nearest_output is not None:
            note += ("; " if note else "") + f"at {at} the model still gives {output_text(nearest_output)}"
        text += f" ({note})" if note else ""
    if keeps:
        text += ", while keeping " + join_and([keep_phrase(k) for k in keeps])
    if source == NEXT_RULE and rule_id:
        text += (f" (rule {rule_id}: the optimal rule {paper_rule_id} has no point the model confirms here)"
                 if paper_rule_id else f" (rule {rule_id})")
    return text


def inside_rule_sentence(rule_id: str | None, keeps: list) -> str:
    """A metarule that lies inside its rule (the paper: "No change needed; keep …"), as people it serves read
    it: everyone it serves is inside the rule already and the model does not put them in the target, so no
    change is *not* their recourse."""
    rule = f"rule {rule_id}" if rule_id else "its rule"
    where = f" ({join_and([keep_phrase(k) for k in keeps])})" if keeps else ""
    return (f"Inside {rule} already{where}: the rule asks no change, but anyone here the model does not put in "
            "the target needs another rule's advice")


def checked_metacounterfactual_sentence(metamoves: list, changes: list, keeps: list, *, verified: bool,
                                        rule_id: str | None = None, paper_changes: list = ()) -> str:
    """A metacounterfactual as checked on the model.

    Verified: "If A were 1820: change C to 5, while keeping D ≤ 4 (checked on the model)" — ``metamoves`` and
    ``changes`` are ``{"feature", "value"}`` with the values of the confirmed point. Not verified: "If A were ≥
    1820: the model does not confirm this alternative (rule R5 would ask to change C to ≥ 5)" — ``metamoves``
    then carry ``"condition"`` and ``paper_changes`` the rule's change entries; never "no change needed"."""
    if verified:
        condition = join_and([f"{named(c)} were {c['value']}" for c in metamoves])
        then = ("change " + _moves(changes)) if changes else "no other change"
        if keeps:
            then += (", while keeping " if changes else ", keeping ") + join_and([keep_phrase(k) for k in keeps])
        return f"If {condition}: {then} (checked on the model)"
    condition = join_and([change_phrase(named(c), c["condition"], verb="were") for c in metamoves])
    text = f"If {condition}: the model does not confirm this alternative"
    if paper_changes:
        rule = f"rule {rule_id}" if rule_id else "the rule"
        text += f" ({rule} would ask to change " + join_and([change_phrase(named(c), c["condition"])
                                                            for c in paper_changes]) + ")"
    return text


def shown(value) -> str:
    """``value`` for a message: its repr, except that a number too long to read (10**400 has 401 digits; a float
    cannot hold it, so the message must not convert it) is named by its digit count."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) >= 10**30:
        return f"a {len(str(abs(int(value))))}-digit number"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
