"""The data dictionary's private parts; the public face is :mod:`tcrex.dictionary` (import from there)."""
