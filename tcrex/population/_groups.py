"""Who is compared with whom: the group of every row (one column, several columns intersected, or values aligned
with the rows), the groups' display order, and the reference group.

Labels are text; a missing value is its own group (``MISSING_GROUP``). The order and the labels come from values
that merge across partitions (:func:`group_labels`, :func:`group_order`), so counts of files or batches group the
same way as the rows at once. A column the codebook labels names its groups "label (code)"
(:func:`labelled_groups`, the one rule of the dashboard, the audit, the comparison and the CLI; a column name
given as ``groups`` is labelled by :func:`named_groups`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import is_categorical_column
from ..codebook import match_feature
from ..errors import DataError, ParameterError
from ..text import value_text

#: Intersectional groups (``groups=["sex", "race"]``): the column names joined by this, the values by VALUE_JOIN.
COLUMN_JOIN = " × "

VALUE_JOIN = " · "

#: ``reference=REST`` compares every group with all other individuals together.
REST = "rest"

#: Label given to individuals whose group value is missing.
MISSING_GROUP = "(missing)"

REST_LABEL = "the rest of the population"

MAX_GROUPS = 50


def group_display(group_column, group) -> str:
    """How a group is named in sentences: ``"<column> = <label>"``; an intersection of several columns
    ``"sex = F and race = B"``."""
    columns = str(group_column).split(COLUMN_JOIN)
    values = str(group).split(VALUE_JOIN)
    if len(columns) > 1 and len(values) == len(columns):
        return " and ".join(f"{c} = {v}" for c, v in zip(columns, values))
    return f"{group_column} = {group}"


def resolve_groups(X: pd.DataFrame, groups) -> tuple[np.ndarray, list, str]:
    """Group label (text) of every row of X, the labels in display order, and the grouping column's name."""
    series, name = group_series(X, groups)
    labels, values, categories, missing = group_labels(series)
    return labels, group_order(values, categories, missing), name


def _intersection(parts: list[pd.Series]) -> pd.Series:
    """Several groupings as one: a row's group is its values joined ("F · B"), "(missing)" standing for a missing
    value; the name joins the columns' names ("sex × race"). Groups are the combinations present."""
    text = [_labels_of(p) for p in parts]
    joined = text[0]
    for t in text[1:]:
        joined = joined + VALUE_JOIN + t
    return joined.rename(COLUMN_JOIN.join(str(p.name) for p in parts))


def _labels_of(p: pd.Series) -> pd.Series:
    """Each value's label (text; ``MISSING_GROUP`` when missing), worked out once per distinct value."""
    codes, uniques = pd.factorize(p.astype(object), use_na_sentinel=True)
    text = np.array([_label(v) for v in uniques] + [MISSING_GROUP], dtype=object)
    return pd.Series(text[codes], index=p.index, dtype=object).astype(str)


def group_series(X: pd.DataFrame, groups) -> tuple[pd.Series, str]:
    """The grouping as a Series aligned with X, and its name (checks the column, length and index). Several
    column names (a list) or a DataFrame of groupings give intersectional groups (:func:`_intersection`)."""
    if isinstance(groups, (list, tuple)) and len(groups) > 1 and all(isinstance(g, str) for g in groups):
        parts = [group_series(X, g)[0].rename(g) for g in groups]
        series = _intersection(parts)
        return series, str(series.name)
    if isinstance(groups, pd.DataFrame):
        if groups.shape[1] == 0:
            raise DataError("groups is a table without columns; give at least one grouping column")
        parts = [group_series(X, groups[c].rename(str(c)))[0].rename(str(c)) for c in groups.columns]
        series = parts[0] if len(parts) == 1 else _intersection(parts)
        return series, str(series.name)
    if isinstance(groups, (list, tuple)) and len(groups) == 1 and isinstance(groups[0], str):
        groups = groups[0]
    if isinstance(groups, str) or (np.ndim(groups) == 0 and not isinstance(groups, pd.Series)):
        if groups not in X.columns:
            raise DataError(f"groups names column {groups!r}, which is not in X (columns: {list(X.columns)}); "
                            "pass the column name or a Series/array with one group per row")
        return X[groups], str(groups)
    if isinstance(groups, pd.Series):
        name = "group" if groups.name is None else str(groups.name)
        if len(groups) != len(X):
            raise DataError(f"groups has {len(groups)} values but X has {len(X)} rows; give one group per row")
        if not groups.index.equals(X.index):
            same = (not groups.index.has_duplicates and not X.index.has_duplicates
                    and set(groups.index) == set(X.index))
            if not same:
                raise DataError("the groups Series is indexed differently from X; align it (same index) or pass "
                                "groups.to_numpy() to match rows by position")
            groups = groups.reindex(X.index)
        return groups, name
    arr = np.asarray(groups, dtype=object)
    if arr.ndim != 1 or len(arr) != len(X):
        raise DataError(f"groups must hold one value per row of X ({len(X)}), got shape {arr.shape}")
    return pd.Series(arr, index=X.index), "group"


def group_labels(series: pd.Series) -> tuple[np.ndarray, list, list | None, bool]:
    """Per row its group label (text, ``MISSING_GROUP`` when missing); the distinct values present, the
    categories of a categorical column (else None) and whether a value is missing — what the display order needs
    (:func:`group_order`), mergeable across partitions."""
    missing = series.isna().to_numpy()
    present = series[~missing]
    values = list(pd.unique(present.astype(object)))
    categories = list(series.cat.categories) if isinstance(series.dtype, pd.CategoricalDtype) else None
    codes, uniques = pd.factorize(series.astype(object), use_na_sentinel=True)
    text = np.array([_label(v) for v in uniques] + [MISSING_GROUP], dtype=object)
    labels = text[codes]  # code -1 (missing) picks the last entry
    if missing.any():
        labels[missing] = MISSING_GROUP
    n_labels = len(set(text[:-1].tolist())) + bool(missing.any())
    if n_labels > MAX_GROUPS:  # checked per partition too: a column with many values fails early
        _too_many_groups(n_labels)
    return labels, values, categories, bool(missing.any())


def _label(v) -> str:
    return str(v.item() if isinstance(v, np.generic) else v)


def _too_many_groups(n) -> None:
    raise ParameterError(f"groups has {n} distinct values (at most {MAX_GROUPS}); a numeric column "
                         "should be binned first, e.g. pandas.cut(age, [0, 30, 50, 120])")


def group_order(values, categories=None, has_missing=False) -> list:
    """Group labels in display order: a categorical's category order, else sorted values; missing last."""
    if categories is not None:
        seen = set(values)
        values = [c for c in categories if c in seen]
    else:
        try:
            values = sorted(values)
        except TypeError:
            values = sorted(values, key=lambda v: (type(v).__name__, str(v)))
    order = []
    for v in values:
        label = _label(v)
        if label not in order:
            order.append(label)
    if has_missing:
        order.append(MISSING_GROUP)
    if not order:
        raise DataError("groups is empty")
    if len(order) > MAX_GROUPS:
        _too_many_groups(len(order))
    return order


def is_rest(reference, groups) -> bool:
    """The reference is everyone outside the compared group (``reference="rest"``; a group literally called "rest"
    is a group)."""
    return reference == REST and REST not in groups


def resolve_reference(reference, order, table) -> str:
    if reference is None:
        usable = table[table["n"] > 0]
        pool = usable if len(usable) else table
        return str(pool.loc[pool["n_total"].idxmax(), "group"])  # idxmax: first of equal maxima
    label = str(reference)
    if label in order:
        return label
    if label == REST:
        return REST
    raise ParameterError(f"reference {reference!r} is not a group; groups are {order} (or use 'rest')")


def labelled_groups(s, labels: dict | None, *, every_label: bool = False):
    """A grouping column with the codebook's labels as group names — "tenant (Rent)" through
    :func:`tcrex.text.value_text`, so findings, charts, reports and the CLI's JSON name groups as the sentences
    name values — as a categorical in the column's own order (its categories, else its values sorted); ``s``
    itself when nothing in it is labelled. ``labels``: ``{value: label}`` for this column, keyed as in a codebook
    (matched by :func:`tcrex.codebook.match_feature`; the column need not be a model feature).

    ``every_label``: the categories also name the codebook's values that ``s`` lacks (in order), so batches and
    files of one column, counted apart and added (the CLI's audit and compare), name and order their groups alike
    whenever the codebook labels every value they hold."""
    if not labels:
        return s
    values = list(pd.unique(s.dropna()))
    categorical = is_categorical_column(s)
    matched, unknown = match_feature(str(s.name), categorical, values, labels)
    if every_label:
        if categorical:  # keys that name no value of s stand for values of their own
            extra = unknown
            matched.update(match_feature(str(s.name), True, extra, {k: labels[k] for k in extra})[0])
        else:  # numeric keys label their number whether or not s holds it
            present = {float(v) for v in values}
            extra = [n for n in matched if n not in present]
        values += extra
    if not matched:
        return s
    if isinstance(s.dtype, pd.CategoricalDtype):
        order = list(s.cat.categories) + [v for v in values if v not in set(s.cat.categories)]
    else:
        order = sorted(values, key=str) if categorical else sorted(values)
    names = {v: value_text(v, matched) for v in order}
    return pd.Series(pd.Categorical(s.map(names), categories=list(dict.fromkeys(names.values()))), index=s.index,
                     name=s.name)


def named_groups(explainer, X, groups, group_labels: dict | None = None):
    """``groups`` as the audit and the comparison count them: a column name of ``X`` that a codebook labels
    becomes that column with its groups named "label (code)" (:func:`labelled_groups`, every codebook value
    among its categories so files counted apart add up alike); anything else is returned as it is.
    ``group_labels``: the codebook's labels of that column (it need not be a feature), over the explainer's own
    labels of the feature of that name."""
    if not isinstance(groups, str) or groups not in getattr(X, "columns", ()):
        return groups
    schema = getattr(explainer, "schema_", None)
    own = schema.value_labels.get(groups, {}) if schema is not None else {}
    labels = {**own, **(group_labels or {})}
    if not labels:
        return groups
    return labelled_groups(X[groups], labels, every_label=True).rename(groups)
