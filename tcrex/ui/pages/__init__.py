"""The dashboard's pages room: one helper module per page of ``pages/views/``, named as the page
(``data_model``, ``global_rules``, ``rule_plot``, ``change_keep``, ``individual``, ``audit``, ``compare``,
``export``). A page helper may use the widgets, the state and another page's helper (Compare models reuses the
audit's controls); nothing in :mod:`tcrex.ui.widgets` or :mod:`tcrex.ui.state` imports it.
"""
