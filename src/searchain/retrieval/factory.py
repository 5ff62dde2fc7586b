"""Open a retriever from a command-line spec.

bm25            BM25 index (--index DIR; default: the demo corpus)
dense           dense embedding index (--dense-index DIR; default: the demo corpus)
hybrid          reciprocal-rank fusion of the two above
postgresql://USER@HOST/DB?collection=NAME as --index: a PostgreSQL collection, searched
                by bm25, dense or hybrid in the database (retrieval/postgres/)
remote:URL      a retrieval service: `searchain serve-index`, or any ColBERTv2 server
llm-url[:OPTS]  LLM-URL: the LLM names Wikipedia URLs, pages are fetched and ranked (needs
                an LLM: ``llm=``; see searchain.retrieval.llm_url.spec for OPTS)

``+parts`` and ``+bridge`` after bm25, dense or hybrid (``hybrid+parts+bridge``) also search
a question's parts and a hop from what its top passage adds (retrieval/query_plan.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from searchain.retrieval.base import Retriever

SPECS = ("bm25", "dense", "hybrid", "remote:URL", "llm-url[:OPTIONS]")
PLAN_OPTIONS = ("parts", "bridge")
# What a person's question is searched with unless they say otherwise (ask, serve, mcp, search,
# the Python API): BM25 with a query per part and a bridge hop (docs/retrieval.md § Questions
# that need two passages: what the tune sets measured, and why the stronger hybrid with the
# packaged embedder is not the default yet). `searchain eval` and `serve-index` keep plain
# "bm25": the committed research runs were made with it, and a served index ranks one query.
DEFAULT_RETRIEVER = "bm25+parts+bridge"


def split_plan(spec: str) -> tuple[str, set[str]]:
    """``"hybrid+parts+bridge"`` → ``("hybrid", {"parts", "bridge"})``."""
    base, *options = spec.split("+")
    unknown = [o for o in options if o not in PLAN_OPTIONS]
    if unknown or len(set(options)) != len(options):
        raise ValueError(
            f"unknown retriever option {'+'.join(unknown) or 'repeated'} in {spec!r}: after "
            f"bm25, dense or hybrid, add +parts, +bridge or both"
        )
    return base, set(options)


def default_dense_index(cache_dir: str | Path | None = None, show_progress: bool = False):
    """The demo corpus's dense index, built on first use (a minute or two) and cached."""
    from searchain.paths import cache_root
    from searchain.retrieval.demo import demo_corpus_path
    from searchain.retrieval.dense import DenseIndex

    corpus = demo_corpus_path()
    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()[:12]
    out = cache_root(cache_dir) / "indexes" / f"demo-dense-{digest}"
    if (out / "metadata.json").is_file():
        return DenseIndex.load(out)
    from searchain.retrieval.corpus import read_corpus

    passages = list(read_corpus(corpus, "jsonl", max_words=None))  # a total: the bar has an ETA
    reader = {"fmt": "jsonl", "max_words": None}
    return DenseIndex.build(
        passages, out, corpus_path=corpus, reader=reader, show_progress=show_progress
    )


def is_llm_url(spec: str) -> bool:
    """Whether ``spec`` names LLM-URL (which asks an LLM for the URLs it fetches)."""
    return spec == "llm-url" or spec.startswith("llm-url:")


def _postgres_url(index: str | Path | None, dense_index: str | Path | None) -> str | None:
    """The collection's URL when ``--index`` (or ``--dense-index``) names one: it holds
    the lexical and the dense index both, so one URL serves every spec."""
    from searchain.retrieval.postgres.target import is_postgres_url

    urls = {str(i) for i in (index, dense_index) if is_postgres_url(str(i))}
    if len(urls) > 1:
        raise ValueError("--index and --dense-index name two PostgreSQL collections; name one")
    if urls and {index, dense_index} - urls - {None}:
        raise ValueError("a PostgreSQL collection holds both indexes: name only it")
    return urls.pop() if urls else None


def with_plan(retriever: Retriever, spec: str) -> Retriever:
    """``retriever`` searched as ``spec``'s ``+parts`` / ``+bridge`` say (an index object a
    caller opened itself; ``spec``'s base names what it is, and is not reopened)."""
    _, plan = split_plan(spec)
    if not plan:
        return retriever
    from searchain.retrieval.query_plan import QueryPlanRetriever

    return QueryPlanRetriever(retriever, parts="parts" in plan, bridge="bridge" in plan)


def open_retriever(
    spec: str = DEFAULT_RETRIEVER,
    *,
    index: str | Path | None = None,
    dense_index: str | Path | None = None,
    show_progress: bool = False,
    llm: object | None = None,
) -> Retriever:
    """``llm`` is the model LLM-URL asks for URLs (default: the embedded local model)."""
    if is_llm_url(spec):
        from searchain.retrieval.llm_url.spec import open_llm_url

        return open_llm_url(spec, llm=llm)
    if spec.startswith("remote:"):
        from searchain.retrieval.remote import RemoteRetriever

        return RemoteRetriever(spec[len("remote:") :])
    base = _open_local(split_plan(spec)[0], index, dense_index, show_progress)
    return with_plan(base, spec)


def _open_local(
    spec: str,
    index: str | Path | None,
    dense_index: str | Path | None,
    show_progress: bool,
) -> Retriever:
    if spec not in ("bm25", "dense", "hybrid"):
        raise ValueError(f"unknown retriever {spec!r}; one of {', '.join(SPECS)}")
    database = _postgres_url(index, dense_index)
    if database is not None:
        from searchain.retrieval.postgres import PostgresIndex

        return PostgresIndex(database, mode=spec)
    parts: list[Retriever] = []
    if spec in ("bm25", "hybrid"):
        from searchain.retrieval.bm25 import BM25Index
        from searchain.retrieval.demo import default_index

        parts.append(BM25Index.load(index) if index else default_index())
    if spec in ("dense", "hybrid"):
        from searchain.retrieval.dense import DenseIndex

        dense = DenseIndex.load(dense_index) if dense_index else None
        parts.append(dense or default_dense_index(show_progress=show_progress))
    if spec == "hybrid":
        from searchain.retrieval.hybrid import HybridRetriever

        return HybridRetriever(parts)
    return parts[0]
