"""The data dictionary: what each column means, declared and not guessed, and the one owner of that concept.

Per feature (:class:`FeatureEntry`): a title and description, value labels, special codes with their meanings
(values of a numeric column that are codes, not numbers: categories beside the number line), the kind (numeric,
categorical, ordered), the unit and the actionability (immutable, a direction, a history flag). A
:class:`DataDictionary` holds them and has a versioned JSON form (:meth:`DataDictionary.to_json` /
:meth:`DataDictionary.from_json`). Files are untrusted input (:func:`read_dictionary`: the extended codebook CSV,
the JSON form, Frictionless Table Schema descriptors, plain codebooks). :func:`suggest` says what a table implies
(candidate codes, kinds, actionability) for a person to confirm. ``TCREx(dictionary=...)`` applies one.
The formats are documented in docs/dictionary.md.
"""
from ._readers import (MAX_DICTIONARY_BYTES, ROW_KINDS, from_table_schema, read_dictionary, read_dictionary_file,
                       to_csv_text, to_table_schema)
from ._record import (ACTIONABILITY, CATEGORICAL, FORMAT, KINDS, MAX_DESCRIPTION_CHARS, MAX_FEATURES, MAX_TITLE_CHARS,
                      NUMERIC, ORDERED, VERSION, DataDictionary, FeatureEntry, as_dictionary, value_key)
from ._suggest import Suggestion, Suggestions, candidate_codes, code_question, labelled_values, suggest

__all__ = ["ACTIONABILITY", "CATEGORICAL", "FORMAT", "KINDS", "MAX_DESCRIPTION_CHARS", "MAX_DICTIONARY_BYTES",
           "MAX_FEATURES", "MAX_TITLE_CHARS", "NUMERIC", "ORDERED", "ROW_KINDS", "VERSION", "DataDictionary",
           "FeatureEntry", "Suggestion", "Suggestions", "as_dictionary", "candidate_codes", "code_question",
           "from_table_schema", "labelled_values", "read_dictionary", "read_dictionary_file", "suggest",
           "to_csv_text", "to_table_schema", "value_key"]


def _suggest(cls, frame, dictionary=None, **kwargs):
    """:func:`suggest` as a class method: ``DataDictionary.suggest(frame)``."""
    return suggest(frame, dictionary, **kwargs)


DataDictionary.suggest = classmethod(_suggest)
DataDictionary.to_csv = to_csv_text
DataDictionary.to_table_schema = to_table_schema
