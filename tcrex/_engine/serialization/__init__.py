"""Serialization: the versioned JSON export of a fitted explainer (rules and metarules, never the model)."""
