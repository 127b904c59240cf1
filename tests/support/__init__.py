"""What tests share: helpers, test data and models, imported one way, ``from tests.support.<module> import <name>``
(tests/test_test_layout.py checks that no test imports another test module, a conftest or a helper kept elsewhere).
Fixtures stay in the ``conftest.py`` beside the tests that use them.

* ``apptest_kit``: the dashboard under Streamlit's AppTest (open a page, apply parameters, upload, check a page);
* ``audit_checks``: comparing two audits figure by figure;
* ``browser``: the dashboard in a real server and Chromium (start a server, wait for a script run, a layout, a
  tab; go to a page, upload a table, download the report; a page without errors);
* ``builders``: model files and tables built in memory (valid and hostile inputs of the intake);
* ``credit_like``: credit-bureau-like and German-credit-like data with their models;
* ``data``: small problems with known rules (the paper's Figure 1, a mixed numeric/categorical table) and the
  models used on them;
* ``hostile_corpus``: the hostile-input corpus, every case rebuilt from its name (run by
  ``benchmarks/hostile_corpus.py``, a subset by tests/intake/test_hostile_corpus.py);
* ``hostile_models``: hand-edited .skops schemas, XGBoost documents and UBJSON bombs, with the refusal each must get;
* ``oracle``: a brute-force reference for T-CREx rules and metarules, written from the specification only;
* ``problems``: random data sets, black boxes and parameters from one seed, for the property tests;
* ``report_sample``: the report of the bundled loans sample as the dashboard builds it;
* ``servers``: subprocess servers on free ports, waiting on events, PostgreSQL for the workspace store.
"""
