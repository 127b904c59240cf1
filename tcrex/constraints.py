"""Actionability constraints, public: parse, describe, suggest and pack them (see :mod:`tcrex._constraints`).

>>> from tcrex.constraints import describe_constraints
>>> describe_constraints({"age": "increase_only", "sex": "immutable"})
'age: increase only; sex: immutable'
"""
from ._constraints import (DECREASE, FREE, IMMUTABLE, INCREASE, KINDS, Constraints, FeatureConstraint,
                           describe_constraint, describe_constraints, pack_constraints, suggest_constraints,
                           unpack_constraints)

__all__ = ["Constraints", "FeatureConstraint", "KINDS", "FREE", "IMMUTABLE", "INCREASE", "DECREASE",
           "describe_constraint", "describe_constraints", "suggest_constraints", "pack_constraints",
           "unpack_constraints"]
