"""The Python API: index a folder, ask a question, read the answer and its cited sources.

    from searchain.api import ask, index_folder

    index = index_folder("docs/", "docs-index")
    trace = ask("Which command resumes an interrupted evaluation run?", index=index)
    print(trace.final_content)
    for mark, passage in trace.cited().items():
        print(f"[{mark}] {passage.locator()}")

``ask`` takes the same methods, models and retrievers as ``searchain ask`` and returns the
same :class:`~searchain.types.Trace` (``.answer``, ``.final_content``, ``.citations``,
``.references``, ``.nodes``, ``.to_dict()``). For many questions, :func:`make_asker` opens the
model and index once. :func:`evaluate` runs methods over a data set into a resumable run
directory, as ``searchain eval`` does, and :func:`report` compares runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchain.methods.settings import Setting
from searchain.retrieval import BM25Index
from searchain.retrieval.base import Retriever
from searchain.retrieval.documents import IndexReport, index_documents
from searchain.retrieval.factory import DEFAULT_RETRIEVER, with_plan
from searchain.retrieval.postgres.target import is_postgres_url
from searchain.types import Trace

if TYPE_CHECKING:
    from searchain.retrieval.postgres import PostgresIndex

__all__ = ["ask", "evaluate", "index_folder", "make_asker", "open_index", "report", "settings"]


def index_folder(
    paths: str | Path | Sequence[str | Path],
    out: str | Path,
    **options: Any,
) -> BM25Index | PostgresIndex:
    """Index the documents under ``paths`` into the directory ``out`` (or the collection a
    ``postgresql://`` URL names) and return the index.

    Re-running it re-reads only added and changed files. ``options`` are those of
    :func:`searchain.retrieval.documents.index_documents` (``include``, ``exclude``,
    ``max_words``, ``strict``, ...); :func:`index_folder_report` also returns what changed.
    """
    return index_folder_report(paths, out, **options)[0]


def index_folder_report(
    paths: str | Path | Sequence[str | Path], out: str | Path, **options: Any
) -> tuple[BM25Index | PostgresIndex, IndexReport]:
    """:func:`index_folder` and its report (added, changed, removed, unchanged, skipped).

    ``out`` may be a ``postgresql://USER@HOST/DB?collection=NAME`` URL: the documents go
    into that collection, a file per transaction (``dense=True`` stores embedding vectors too,
    for ``retriever="hybrid"``)."""
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    if is_postgres_url(str(out)):
        from searchain.retrieval.postgres import PostgresIndex, index_folders, parse_target

        report = index_folders(given, parse_target(str(out)), **options)
        return PostgresIndex(str(out)), report
    return index_documents(given, out, **options)


def open_index(path: str | Path) -> BM25Index | PostgresIndex:
    """Open an index made by :func:`index_folder` or ``searchain index`` (a directory, or
    a ``postgresql://`` collection)."""
    if is_postgres_url(str(path)):
        from searchain.retrieval.postgres import PostgresIndex

        return PostgresIndex(str(path))
    return BM25Index.load(path)


def make_asker(
    *,
    index: Retriever | str | Path | None = None,
    method: str = "searchain",
    retriever: str = DEFAULT_RETRIEVER,
    llm: str = "local",
    model: str | None = None,
    base_url: str | None = None,
    api: str = "auto",
    k: int | None = None,
    cache: bool = True,
    abstain_below: float | None = None,
    max_risk: float | None = None,
    risk_delta: float = 0.1,
    confidence_checks: tuple[str, ...] = (),
    **method_options: Any,
) -> Callable[[str], Trace]:
    """A function that answers questions, with the model and index opened once.

    ``index``: an index object, the path of one, or ``None`` for the bundled demo corpus.
    ``retriever``: how it is searched (``bm25``, ``hybrid``, ... with ``+parts`` /
    ``+bridge``; the default searches a question's parts and a hop from its top passage; for an
    index object only the ``+`` options apply).
    ``model``: one string — ``qwen2.5-coder-1.5b``, ``local:PATH.gguf``,
    ``openai:gpt-4o-mini@http://127.0.0.1:8000/v1`` — or, as ``searchain ask`` takes them,
    ``llm``/``model``/``base_url``/``api`` (the default: ``$SEARCHAIN_MODEL``, else
    Qwen2.5-Coder-1.5B-Instruct). ``method_options``: the method's settings (``theta=``,
    ``r_max=`` for SearChain, ...; :func:`settings` lists them), checked by name, type and
    range before any model runs; objects (a tools list, an NLI judge) go to the builder.
    Every trace carries ``confidence`` (calibrated where a calibrator was fit for exactly
    its configuration); ``abstain_below=P`` or ``max_risk=R`` (with ``risk_delta``, δ) mark
    an answer below the threshold as withheld (``trace.confidence.abstained``; the guess
    stays ``trace.answer``; ``threshold`` None and ``terms`` say why when none is certified).
    ``confidence_checks=("nli",)`` adds signals that cost model calls (their cost is in
    ``trace.confidence.cost``; ``scoring/confidence/checks.py``).
    """
    from searchain.methods.assembly import Spec, assemble, model_string
    from searchain.methods.catalog import given_to

    method_options = {**given_to(method, {"k": k}), **method_options}
    plain = {n: v for n, v in method_options.items() if v is None or isinstance(v, _PLAIN)}
    objects = {n: v for n, v in method_options.items() if n not in plain}
    spec = Spec(
        method=method,
        retriever=retriever,
        model=model_string(llm, model, base_url),
        api=api,
        options=plain,
        cache=cache,
        abstain_below=abstain_below,
        max_risk=max_risk,
        risk_delta=risk_delta,
        confidence_checks=tuple(confidence_checks),
    )
    opened = open_index(index) if isinstance(index, str | Path) else index
    searched = None if opened is None else with_plan(opened, retriever)
    return assemble(spec, retriever=searched, **objects)


_PLAIN = (bool, int, float, str)


def evaluate(
    dataset: str,
    out: str | Path,
    *,
    methods: Sequence[str] = ("searchain",),
    model: str | None = None,
    index: str | Path | None = None,
    limit: int | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Run ``methods`` over ``dataset`` (a name such as ``hotpotqa`` or a file) into the run
    directory ``out``, resuming it if it exists, and return the summary (``done``,
    ``failed``, ``skipped``, ``seconds``); :func:`report` compares runs. ``options`` are
    :class:`~searchain.eval.evaluate.Evaluation`'s (``seed``, ``concurrency``, ``k``,
    ``options`` per method, ``retry_failed``, ...); ``model`` as :func:`make_asker`'s."""
    from searchain.eval.evaluate import Evaluation
    from searchain.eval.evaluate import evaluate as run_evaluation
    from searchain.methods.assembly import Spec

    spec = Spec(model=model, index=str(index) if index else None)
    plan = Evaluation(dataset, Path(out), tuple(methods), spec, limit=limit, **options)
    return run_evaluation(plan)


def report(*runs: str | Path) -> str:
    """The Markdown comparison of run directories (methods x metrics with 95 % bootstrap
    confidence intervals), as ``searchain report`` prints it."""
    from searchain.eval import report as rep

    return rep.markdown(rep.summarize(rep.load([Path(r) for r in runs])))


def settings(method: str = "searchain") -> tuple[Setting, ...]:
    """The settings ``method`` takes as keyword options of :func:`ask` and
    :func:`make_asker` (name, type, default, allowed values, help), as ``searchain settings
    METHOD`` lists them. An unknown name or a value out of range is a ``ValueError``."""
    from searchain.methods.catalog import method_settings

    return method_settings(method)


def ask(question: str, **options: Any) -> Trace:
    """Answer ``question`` with [n] citations; ``options`` as :func:`make_asker`'s."""
    return make_asker(**options)(question)
