"""searchain: LLMs that reason together with a search engine, every step traced to its source.

Entry points: :mod:`searchain.llm` (backends), :mod:`searchain.retrieval` (corpora, BM25),
:mod:`searchain.methods` (SearChain and the baselines), ``searchain`` on the command line.
"""

__version__ = "0.1.0"
