"""Think&Cite: attributed long-form answers by self-guided MCTS with a progress reward model.

``mcts`` is the search, free of LLMs; ``prompting`` the action format and demos; ``chat`` the
same as a dialogue for chat models and the reader of their replies; ``agent`` the
expansion step (think → search → reflect → cite); ``reward`` the progress reward (R_g + R_a);
``method`` the searchain method returning a Trace; ``component`` what every surface knows of
it and how it is built. Spec: ``shared/spec/thinkcite.md``.
"""

from searchain.methods.thinkcite.agent import AgentConfig, ThinkCiteProblem
from searchain.methods.thinkcite.component import ThinkCiteComponent
from searchain.methods.thinkcite.mcts import MCTS, MCTSConfig, Reward, SearchResult, TreeNode
from searchain.methods.thinkcite.method import ThinkCite, ThinkCiteConfig
from searchain.methods.thinkcite.reward import ProgressReward, RewardConfig

__all__ = [
    "MCTS",
    "AgentConfig",
    "MCTSConfig",
    "ProgressReward",
    "Reward",
    "RewardConfig",
    "SearchResult",
    "ThinkCite",
    "ThinkCiteComponent",
    "ThinkCiteConfig",
    "ThinkCiteProblem",
    "TreeNode",
]
