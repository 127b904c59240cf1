"""Explaining rows: the lookup and its sentence, the rules and metarules tables and summary, metarule views."""
