"""Experiments the product does not use: the learned linear evaluation (:mod:`.value`, in C ``feudo_ai._value``) and
its trainer (:mod:`.train`, ``feudo train``). Reached only by the ``evaluation="learned"`` setting of
:class:`feudo_ai.settings.Experimental`; no product profile sets it (docs/search-history.md: it did not pay)."""
