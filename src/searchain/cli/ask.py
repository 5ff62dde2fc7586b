"""``searchain ask``: answer one question with any method and show where the answer came from."""

from __future__ import annotations

import contextlib
import logging
from typing import Annotated

import typer
from rich.markup import escape
from rich.panel import Panel

from searchain.cli.common import JsonOpt, MethodOpt, console, err, fail, opening_status
from searchain.cli.method_flags import MethodChoice, MethodFlags
from searchain.cli.model_options import (
    AbstentionOptions,
    ConfidenceChecks,
    KOpt,
    ModelOptions,
    RetrievalOptions,
    RuntimeOptions,
)
from searchain.cli.option_groups import spec_of
from searchain.methods.catalog import given_to
from searchain.methods.searchain.route import route_words
from searchain.trace_extras import AnswerExtras, ChainExtras, RetrievalReports, RunStamps
from searchain.types import Passage, Trace, strict_dumps

# A HotpotQA dev question (the demo corpus holds its paragraphs) that the default model
# answers right (results/default-model: it is right on 4 of the 10 demo questions).
DEMO_QUESTION = (
    'The director of the romantic comedy "Big Stone Gap" is based in what New York city?'
)


ShowTreeOpt = Annotated[
    bool, typer.Option(help="Show the Tree-of-Reasoning (REBEL: the recursion tree).")
]
QuestionArg = Annotated[
    str | None, typer.Argument(help="The question. Default: a demo HotpotQA question.")
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Log retries.")]


def ask(
    question: QuestionArg = None,
    *,
    retrieval: RetrievalOptions,
    choice: MethodChoice,
    backend: ModelOptions,
    k: KOpt = None,
    show_tree: ShowTreeOpt = False,
    runtime: RuntimeOptions,
    json_out: JsonOpt = False,
    verbose: VerboseOpt = False,
    option: MethodOpt = None,
    abstention: AbstentionOptions,
    checks: ConfidenceChecks,
    flags: MethodFlags,
) -> None:
    """Answer a question with \\[n] citations to the passages that support it.

    Each method's settings have their own options below (and every setting, with or without
    one, is reachable with -O NAME=VALUE); `searchain settings METHOD` lists them all."""
    from searchain.llm import LLMError
    from searchain.methods.assembly import assemble
    from searchain.methods.options import parse_method_options

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)
    q = question or DEMO_QUESTION
    if question is None and not json_out:
        err.print(f"[dim]No question given; asking the demo question:[/] {q}")
    method = choice.method
    try:
        options = flags.options_of(method)
        options.update(parse_method_options(option, [method])[method])
        options = {**given_to(method, {"k": k}), **options}  # -O k=3 wins over -k 3
        spec = spec_of(retrieval, choice, backend, runtime, abstention, checks, options=options)
        with opening_status(spec):
            runner = assemble(spec)
    except (LLMError, ValueError, ImportError, FileNotFoundError, RuntimeError) as e:
        fail(str(e))
    try:
        with err.status("Thinking...") if not json_out else contextlib.nullcontext():
            trace = runner(q)
    except (LLMError, RuntimeError) as e:  # RetrievalError from a remote index is one
        fail(str(e))
    show_answer(trace, json_out=json_out, show_tree=show_tree)


def show_answer(trace: Trace, *, json_out: bool, show_tree: bool) -> None:
    """The trace as JSON, or the answer, its references and (asked for) its tree."""
    if json_out:
        print(strict_dumps(trace.to_dict(), ensure_ascii=False, indent=2))
        return
    if show_tree:
        from searchain.methods.catalog import tree_drawer

        console.print(tree_drawer(trace.method)(trace))
    show_trace(trace)
    for rep in RetrievalReports.of(trace).reports:
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


LOW_CONFIDENCE = 0.5


def show_confidence(trace: Trace) -> None:
    """How far to trust the answer: a calibrated probability (a low one marked), else no
    number — what holds and what fails, and why the score is not a probability; the terms of
    a risk bound (a withheld answer is said before the answer, by ``show_trace``)."""
    conf = trace.confidence
    if conf is None:
        return
    if conf.calibrated:
        low = conf.value < LOW_CONFIDENCE
        value = f"[{'red' if low else 'green'}]{conf.value:.2f}[/]"
        console.print(
            f"[bold]Confidence:[/] {value} (probability that it is right{', low' if low else ''})"
        )
        if conf.lowered_by:
            console.print(f"  [dim]lowered by: {escape('; '.join(conf.lowered_by))}[/]")
        if conf.raised_by:
            console.print(f"  [dim]raised by: {escape('; '.join(conf.raised_by))}[/]")
    else:  # no number: what holds and what fails lead (Confidence.headline, line by line)
        console.print("[bold]Confidence:[/] not a probability (uncalibrated)")
        console.print(f"  [green]what holds:[/] {escape(conf.holds())}")
        console.print(f"  [red]what fails:[/] {escape(conf.fails())}")
        if conf.note:
            console.print(f"  [dim]{escape(conf.note)}[/]")
    if conf.terms:
        console.print(f"  [dim]{escape(conf.terms)}[/]")


def read_for(trace: Trace) -> dict[str, list[str]]:
    """Why SearChain's evidence step read each passage ("question rank 1", "corrects r1.1"),
    by passage id: what the user's words and the chain's nodes each brought (issue 50)."""
    read = ChainExtras.of(trace).evidence_read or []
    return {str(e["id"]): list(e.get("roles") or []) for e in read if isinstance(e, dict)}


def show_trace(trace: Trace) -> None:
    """The answer with its citations, then the numbered references; a withheld answer is
    said to be one first, before the guess."""
    from searchain.scoring.confidence import abstention_text

    notice = abstention_text(trace)
    if notice:
        console.print(f"[bold yellow]{escape(notice)}[/]")
    console.print(
        Panel(
            escape(trace.final_content or "(no answer)"),
            title=f"[bold]{escape(trace.question)}[/]",
            subtitle=trace.method,
        )
    )
    if trace.answer:
        console.print(f"[bold]Answer:[/] {escape(trace.answer)}")
        if how := AnswerExtras.of(trace).note():
            console.print(f"[dim]({escape(how)})[/]")
    if route := route_words(trace):
        console.print(f"[dim]{escape(route)}[/]")
    show_confidence(trace)
    cited = {c.mark for c in trace.citations if c.passage_id}
    post = {c.mark for c in trace.citations if c.origin == "post-hoc"}
    console.print("[bold]References[/]")
    roles = read_for(trace)
    for marks, p in reference_groups(trace):
        label = "".join(f"[{i}]" for i in marks)
        tag = "" if cited & set(marks) else " [dim](not cited)[/]"
        if post & set(marks):
            tag += " [dim](attributed post hoc)[/]"
        if roles.get(p.id):
            tag += f" [dim]· read as: {escape(', '.join(roles[p.id]))}[/]"
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
        f"{', ' + form + ' form' if (form := RunStamps.of(trace).prompt_form) else ''}[/]"
    )
