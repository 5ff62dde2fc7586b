"""searchain: LLMs that reason together with a search engine, every step traced to its source.

The package root is the API::

    from searchain import ask, index_folder, evaluate

    index = index_folder("docs/", "docs-index")
    trace = ask("Which command resumes an interrupted evaluation run?", index=index)
    print(trace.final_content)

Each name is :mod:`searchain.api`'s, imported when first used (so ``import searchain`` stays
cheap and loads no model). Below it: :mod:`searchain.llm` (backends),
:mod:`searchain.retrieval` (corpora, documents, BM25), :mod:`searchain.methods` (SearChain and
the baselines; ``methods.assembly`` builds any of them from one spec), ``searchain`` on the
command line.
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["ask", "evaluate", "index_folder", "make_asker", "open_index", "report", "settings"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from searchain import api

        return getattr(api, name)
    raise AttributeError(f"module 'searchain' has no attribute {name!r}")
