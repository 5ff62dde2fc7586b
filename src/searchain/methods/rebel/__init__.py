"""REBEL (Sodani, Moos, Mirman 2023): the recursion (:mod:`.method`), its settings
(:mod:`.config`), how model replies are read (:mod:`.parse`) and the recursion tree for the
terminal (:mod:`.render`), and its component (:mod:`.component`)."""

from searchain.methods.rebel.component import RebelComponent
from searchain.methods.rebel.config import RebelConfig
from searchain.methods.rebel.method import Rebel, cap_subquestions

__all__ = ["Rebel", "RebelComponent", "RebelConfig", "cap_subquestions"]
