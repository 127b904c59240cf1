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
from ._datadict._readers import (MAX_DICTIONARY_BYTES, ROW_KINDS, from_table_schema, read_dictionary, read_dictionary_file,
                       to_csv_text, to_table_schema)
from ._datadict._record import (ACTIONABILITY, DICTIONARY_FORMAT, KINDS, MAX_DESCRIPTION_CHARS, MAX_FEATURES, MAX_TITLE_CHARS,
                      ORDERED, DICTIONARY_VERSION, DataDictionary, FeatureEntry, as_dictionary, value_key)
from ._datadict._apply import (AUTO, check_dictionary_param, fit_constraints, fit_parameters, label_questions, matched_labels,
                     special_codes_param, with_titles)
from ._datadict._suggest import Suggestion, Suggestions, candidate_codes, code_question, labelled_values, suggest

__all__ = ["ACTIONABILITY", "DICTIONARY_FORMAT", "KINDS", "MAX_DESCRIPTION_CHARS", "MAX_DICTIONARY_BYTES",
           "MAX_FEATURES", "MAX_TITLE_CHARS", "ORDERED", "ROW_KINDS", "DICTIONARY_VERSION", "DataDictionary",
           "FeatureEntry", "Suggestion", "Suggestions", "as_dictionary", "candidate_codes", "code_question",
           "from_table_schema", "labelled_values", "read_dictionary", "read_dictionary_file", "suggest",
           "to_csv_text", "to_table_schema", "value_key",
           # what a fit does with a dictionary (TCREx(dictionary=...) calls them; one owner each)
           "AUTO", "check_dictionary_param", "fit_constraints", "fit_parameters", "label_questions", "matched_labels",
           "special_codes_param", "with_titles"]


def _suggest(cls, frame, dictionary=None, **kwargs):
    """:func:`suggest` as a class method: ``DataDictionary.suggest(frame)``."""
    return suggest(frame, dictionary, **kwargs)


def _from_json(cls, text):
    """A dictionary from :meth:`DataDictionary.to_json`'s text, checked as untrusted input (:func:`read_dictionary`)."""
    return read_dictionary(text.encode("utf-8") if isinstance(text, str) else text, "dictionary.json")


DataDictionary.suggest = classmethod(_suggest)
DataDictionary.from_json = classmethod(_from_json)
DataDictionary.to_csv = to_csv_text
DataDictionary.to_table_schema = to_table_schema
