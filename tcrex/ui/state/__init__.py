"""The dashboard's state room: everything a page reads, never draws.

* :mod:`.session` -- the only owner of ``st.session_state`` keys and their accessors;
* :mod:`.caching` -- the cache policy (what every session shares, sizes, eviction) and the session LRU;
* :mod:`.shared` -- server work shared by every session (the bundled sample's outputs and fitted explainer);
* :mod:`.memory` -- the per-session memory budget and the release of disconnected sessions;
* :mod:`.sources` -- reading samples, uploads and models (and :mod:`.training`, models trained in the app);
* :mod:`.active` -- the active data, model, parameters and fit (:class:`~.active.DataAndModel`,
  :class:`~.active.FitResult`);
* :mod:`.verification` -- the model's check of every recommended point, computed once per fit;
* :mod:`.workspace` -- the saved workspace a session runs in (``?ws=`` links);
* :mod:`.st_compat` -- the few Streamlit internals the memory release and the downloads use.

Nothing here imports :mod:`tcrex.ui.widgets` or :mod:`tcrex.ui.pages` (``tests/ui/test_ui_structure.py``).
"""
