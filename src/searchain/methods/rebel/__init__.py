"""REBEL (Sodani, Moos, Mirman 2023): the recursion (:mod:`.method`), its settings
(:mod:`.config`), how model replies are read (:mod:`.parse`) and the recursion tree for the
terminal (:mod:`.render`)."""

from searchain.methods.rebel.config import RebelConfig
from searchain.methods.rebel.method import Rebel, cap_subquestions

__all__ = ["Rebel", "RebelConfig", "cap_subquestions"]
