"""SearChain (Xu et al., WWW 2024): the method (:mod:`.method`), its settings (:mod:`.config`),
the chain generations of each round (:mod:`.rounds`), the answer once they end
(:mod:`.final_answer`; the paper's tracing: :mod:`.tracing`), the CoQ parser
(:mod:`.coq_parser`) and its component, with the paper preset (:mod:`.component`)."""

from searchain.methods.searchain.component import SEARCHAIN_PAPER, SearChainComponent
from searchain.methods.searchain.config import NO_IR_TASKS, NO_IR_TEMPLATE, TASKS, SearChainConfig
from searchain.methods.searchain.final_answer import branch_nodes, content_only
from searchain.methods.searchain.method import Feedback, SearChain
from searchain.methods.searchain.tracing import final_content_of, skc

__all__ = [
    "NO_IR_TASKS",
    "NO_IR_TEMPLATE",
    "SEARCHAIN_PAPER",
    "TASKS",
    "Feedback",
    "SearChain",
    "SearChainComponent",
    "SearChainConfig",
    "branch_nodes",
    "content_only",
    "final_content_of",
    "skc",
]
