"""Words the audit and the comparison share: a confidence level and a list of words."""
from __future__ import annotations


def confidence_text(c) -> str:
    return f"{c * 100:g}%"


def join_words(items, last="or") -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {last} " + items[-1]
