"""Actionability constraints, public: parse, describe, suggest and pack them (see :mod:`tcrex._constraints`).

>>> from tcrex.constraints import describe_constraints
>>> describe_constraints({"age": "increase_only", "sex": "immutable"})
'age: increase only; sex: immutable'
"""
from ._constraints import (CATEGORICAL_KINDS, DECREASE, FREE, IMMUTABLE, INCREASE, KIND_LABELS, KINDS, Constraints,
                           FeatureConstraint, constraint_parts, constraint_spec, describe_constraint,
                           describe_constraints, kinds_for, pack_constraints, suggest_constraints, unpack_constraints,
                           constraints_from_suggestions)

__all__ = ["Constraints", "FeatureConstraint", "KINDS", "CATEGORICAL_KINDS", "KIND_LABELS", "FREE", "IMMUTABLE",
           "INCREASE", "DECREASE", "kinds_for", "constraint_parts", "constraint_spec", "describe_constraint",
           "describe_constraints", "suggest_constraints", "constraints_from_suggestions", "pack_constraints",
           "unpack_constraints"]
