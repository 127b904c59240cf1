"""The dashboard's widgets room: pieces of page drawn on more than one page.

:mod:`.page` (banners and ``require_result``), :mod:`.components` (charts, tables, the chosen individual),
:mod:`.sidebar`, :mod:`.fragments` (the "Not applied yet" cue), the :mod:`.constraints` and :mod:`.outcome`
editors, :mod:`.downloads` (download buttons built on click) and :mod:`.search` (the row search). Widgets read
:mod:`tcrex.ui.state` and never import :mod:`tcrex.ui.pages` (``tests/ui/test_ui_structure.py``).
"""
