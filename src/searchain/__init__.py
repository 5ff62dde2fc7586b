"""searchain: LLMs that reason together with a search engine, every step traced to its source.

Entry points: :mod:`searchain.api` (index a folder, ask: ``from searchain.api import ask,
index_folder``), :mod:`searchain.llm` (backends), :mod:`searchain.retrieval` (corpora,
documents, BM25), :mod:`searchain.methods` (SearChain and the baselines), ``searchain`` on the
command line.
"""

__version__ = "0.1.0"
