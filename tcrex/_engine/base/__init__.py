"""Shared by every stage: schema and encoding, model outputs, parameter checks, boxes, nearest points and
target containment."""
