"""``searchain ask``: answer one question with any method and show where the answer came from."""

from __future__ import annotations

import contextlib
import json
import logging
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.panel import Panel

from searchain.cli.common import (
    DenseIndexOpt,
    IndexOpt,
    JsonOpt,
    MethodOpt,
    RetrieverOpt,
    console,
    err,
    fail,
    is_llm_url,
    open_retriever,
    with_reports,
)
from searchain.cli.method_flags import flags_for, with_method_flags
from searchain.llm.models import ANSWER_MODEL_HELP, API_HELP, MODEL_PATH_HELP, answer_model
from searchain.types import Passage, Trace

# A HotpotQA dev question (the demo corpus holds its paragraphs) that the default model
# answers right (results/default-model: it is right on 4 of the 10 demo questions).
DEMO_QUESTION = (
    'The director of the romantic comedy "Big Stone Gap" is based in what New York city?'
)


@with_method_flags()
def ask(
    question: Annotated[
        str | None, typer.Argument(help="The question. Default: a demo HotpotQA question.")
    ] = None,
    index: IndexOpt = None,
    retriever: RetrieverOpt = "bm25",
    dense_index: DenseIndexOpt = None,
    method: Annotated[
        str,
        typer.Option(
            help="[bold]searchain[/] (plan a chain of queries, "
            "verify and complete it with IR, trace citations), "
            "[bold]retrieve-read[/] (top-k passages, one answer) or "
            "[bold]rebel[/] (recursive subquestions answered with tools, see --tools), "
            "[bold]thinkcite[/] (a long-form answer, 1-3 citations per sentence, found by "
            "tree search; see --iterations, --nli, --reward-model). "
            "Baselines: [bold]direct-prompting[/], [bold]cot[/], [bold]self-ask[/] (follow-up "
            "questions answered by retrieve-then-read), [bold]self-ask-no-search[/], "
            "[bold]react[/] (Search[...]/Finish[...] loop), [bold]direct-retrieval[/] "
            "(= retrieve-read); SearChain ablations: [bold]searchain-no-ir[/], "
            "[bold]searchain-no-verification[/], [bold]searchain-no-completion[/]."
        ),
    ] = "searchain",
    llm: Annotated[
        str,
        typer.Option(
            "--llm",
            help="[bold]local[/] (embedded GGUF model) or "
            "[bold]openai[/] (any OpenAI-compatible endpoint).",
        ),
    ] = "local",
    model: Annotated[str | None, typer.Option(help=ANSWER_MODEL_HELP)] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="Endpoint for --llm openai, e.g. "
            "http://127.0.0.1:8000/v1 "
            "(default: $OPENAI_BASE_URL)."
        ),
    ] = None,
    api: Annotated[str, typer.Option(help=API_HELP)] = "auto",
    model_path: Annotated[Path | None, typer.Option(help=MODEL_PATH_HELP)] = None,
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            help="Passages per query (default: 1 for "
            "SearChain, as in the paper; 5 for retrieve-read).",
        ),
    ] = None,
    show_tree: Annotated[
        bool, typer.Option(help="Show the Tree-of-Reasoning (REBEL: the recursion tree).")
    ] = False,
    cache: Annotated[bool, typer.Option(help="Use the on-disk LLM call cache.")] = True,
    threads: Annotated[
        int | None,
        typer.Option(
            help="CPU threads for --llm local (default: $SEARCHAIN_THREADS or all cores)."
        ),
    ] = None,
    json_out: JsonOpt = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log retries.")] = False,
    option: MethodOpt = None,
    method_flags: dict[str, Any] | None = None,
) -> None:
    """Answer a question with [n] citations to the passages that support it.

    Each method's settings have their own options below (and every setting, with or without
    one, is reachable with -O NAME=VALUE); `searchain settings METHOD` lists them all."""
    from searchain.llm import LLMError, make_llm
    from searchain.methods.base import traced
    from searchain.methods.options import parse_method_options
    from searchain.methods.registry import build_method, check_options

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)
    q = question or DEMO_QUESTION
    if question is None and not json_out:
        err.print(f"[dim]No question given; asking the demo question:[/] {q}")
    try:
        options = flags_for(method, method_flags or {})
        options.update(parse_method_options(option, [method])[method])
        check_options(method, {k: v for k, v in options.items() if k != "k"})
    except ValueError as e:
        fail(str(e))
    needs_ir = options.get("use_ir", True) is not False or method != "searchain"
    # LLM-URL needs the LLM, so it is opened after the client below.
    idx = None
    if needs_ir and not is_llm_url(retriever):
        idx = open_retriever(retriever, index, dense_index)
    try:
        client = make_llm(
            llm,
            model=answer_model(model) if llm == "local" and model_path is None else model,
            base_url=base_url,
            api=api,
            model_path=str(model_path) if model_path else None,
            n_threads=threads,
            cache=cache,
        )
        if needs_ir and idx is None:
            idx = open_retriever(retriever, index, dense_index, llm=client)
        k = options.pop("k", k)  # -O k=3 as well as -k 3
        runner = build_method(method, client, idx, k=k, **options)  # type: ignore[arg-type]
    except (LLMError, ValueError, ImportError, FileNotFoundError) as e:
        fail(str(e))
    try:
        with err.status("Thinking...") if not json_out else contextlib.nullcontext():
            trace = with_reports(traced(runner, client), retriever)(q)  # type: ignore[operator]
    except (LLMError, RuntimeError) as e:  # RetrievalError from a remote index is one
        fail(str(e))
    if json_out:
        print(json.dumps(trace.to_dict(), ensure_ascii=False, indent=2))
        return
    if show_tree and trace.method == "rebel":
        from searchain.methods.rebel.render import recursion_tree

        console.print(recursion_tree(trace))
    elif show_tree:
        from searchain.render import tree_of_reasoning

        console.print(tree_of_reasoning(trace))
    show_trace(trace)
    for rep in trace.meta.get("retrieval", []):
        console.print(f"[bold]URLs the model named[/] ({rep['valid_urls']}/{rep['m']} fetched)")
        for u in rep["urls"]:
            console.print(f"  [dim]{u['status']:>10}[/] {escape(u.get('url') or u['raw'])}")


def reference_groups(trace: Trace) -> list[tuple[list[int], Passage]]:
    """The references, each passage once with every mark that points to it: SearChain's
    mark k is step k's passage, and two steps may have found the same one."""
    groups: dict[tuple[str, str], list[int]] = {}
    out: list[tuple[list[int], Passage]] = []
    for i, p in enumerate(trace.references, 1):
        key = (p.id, p.text)
        if p.id and key in groups:
            groups[key].append(i)
            continue
        marks = [i]
        groups.setdefault(key, marks)
        out.append((marks, p))
    return out


def show_trace(trace: Trace) -> None:
    """The answer with its citations, then the numbered references."""
    console.print(
        Panel(
            escape(trace.final_content or "(no answer)"),
            title=f"[bold]{escape(trace.question)}[/]",
            subtitle=trace.method,
        )
    )
    if trace.answer:
        console.print(f"[bold]Answer:[/] {escape(trace.answer)}")
    cited = {c.mark for c in trace.citations if c.passage_id}
    post = {c.mark for c in trace.citations if c.origin == "post-hoc"}
    console.print("[bold]References[/]")
    for marks, p in reference_groups(trace):
        label = "".join(f"[{i}]" for i in marks)
        tag = "" if cited & set(marks) else " [dim](not cited)[/]"
        if post & set(marks):
            tag += " [dim](attributed post hoc)[/]"
        if p.source and p.source.get("path"):  # a user's document: file, page, heading
            console.print(f"  {escape(label)} [bold]{escape(p.locator())}[/]{tag}")
        else:
            console.print(
                f"  {escape(label)} [bold]{escape(p.title)}[/] [dim]{escape(p.id)}[/]{tag}"
            )
        excerpt = " ".join(p.text[:200].split())  # PDF text breaks every printed line
        console.print(f"      [dim]{escape(excerpt)}{'…' if len(p.text) > 200 else ''}[/]")
    for e in trace.errors:
        console.print(f"[yellow]warning:[/] {escape(e)}")
    u = trace.usage
    console.print(
        f"[dim]{u.llm_calls} LLM call(s), {u.cached_calls} cached, {u.prompt_tokens} prompt + "
        f"{u.completion_tokens} completion tokens, {trace.wall_seconds:.1f}s"
        f"{', ' + form + ' form' if (form := trace.meta.get('prompt_form')) else ''}[/]"
    )
