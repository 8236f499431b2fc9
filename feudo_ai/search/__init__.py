"""The search: :func:`advise` (one entry point, any position, the settings of :mod:`feudo_ai.settings`) over two
backends, the C MO-ISMCTS / PIMC (:mod:`.c_backend`) and the readable Python reference (:mod:`.python_backend`);
each game behind its adapter (:mod:`.games`: Feudo's positions prepared once by :mod:`.position`, Fief 2's by
:mod:`.games.fief2`); the answer (:mod:`.answer`)."""

from .advise import advise
from .answer import Advice, Alternative, CardBelief, PlannedAction, SearchStats
from .position import NotToAct, ObservedPosition, PreparedPosition, decision_root, prepare, prepare_root

__all__ = ["advise", "Advice", "Alternative", "CardBelief", "PlannedAction", "SearchStats", "NotToAct",
           "ObservedPosition", "PreparedPosition", "decision_root", "prepare", "prepare_root"]
