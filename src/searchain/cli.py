"""The ``searchain`` command line.

searchain ask "Who portrayed Corliss Archer in Kiss and Tell?"     # offline, demo corpus
searchain index corpus.jsonl --out my-index                       # your own corpus
searchain ask "..." --index my-index --llm openai --model gpt-4o-mini --api chat
searchain search "Corliss Archer" --index my-index -k 5 --json
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from searchain.llm.models import API_HELP, MODEL_HELP, MODEL_PATH_HELP
from searchain.types import Passage, Trace

app = typer.Typer(
    help=(
        "Answer knowledge-intensive questions with an LLM working together with a search "
        "engine, and see where every step of the answer came from.\n\n"
        "With no options everything runs offline: the embedded Gemma 3 270M model and a BM25 "
        "index of the bundled HotpotQA demo corpus (built on first use)."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)
console = Console()
err = Console(stderr=True)

DEMO_QUESTION = (
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?"
)

IndexOpt = Annotated[
    Path | None,
    typer.Option(
        "--index",
        "-i",
        help="A BM25 index directory made by [bold]searchain index[/]. Default: the demo corpus.",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON to stdout.")]
RetrieverOpt = Annotated[
    str,
    typer.Option(
        "--retriever",
        "-r",
        help="[bold]bm25[/], [bold]dense[/] (MiniLM), [bold]hybrid[/] (rank fusion of both), "
        "[bold]remote:URL[/] (a `searchain serve-index` or ColBERTv2 server) or "
        "[bold]llm-url[:OPTS][/] (the LLM names Wikipedia URLs; pages are fetched and ranked). "
        "OPTS: a mirror URL (`searchain mirror serve`) or key=value,... with base, m (1-10 URLs), "
        "shots (0-10 demos), ranker (bm25/dense), timeout, retries, cache=off; e.g. "
        "llm-url:base=http://127.0.0.1:8765,m=5,shots=0",
    ),
]
ToolsOpt = Annotated[
    Path | None,
    typer.Option(
        help="REBEL tools file (YAML/TOML/JSON): built-in search and calculator, HTTP APIs. "
        "Default: a search tool over the retriever.",
        show_default=False,
    ),
]
MethodOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-O",
        help="A method option as KEY=VALUE, or METHOD.KEY=VALUE for one method; repeatable. "
        "Any field of the method's configuration, e.g. -O thinkcite.n_children=2 "
        "-O max_reflections=3 -O seed=1 (Think&Cite), -O theta=-1.0 (SearChain), "
        "-O max_depth=2 (REBEL). Unknown names are errors.",
        show_default=False,
    ),
]
DenseIndexOpt = Annotated[
    Path | None,
    typer.Option(help="A dense index directory (default: the demo corpus).", show_default=False),
]


NliOpt = Annotated[
    str | None,
    typer.Option(
        help="NLI judge: [bold]llm[/] (the LLM answers Yes/No), the path of a local Hugging "
        "Face NLI model (TRUE T5, DeBERTa/RoBERTa MNLI), or [bold]none[/]. Think&Cite's R_a; "
        "in eval, also ALCE citation recall/precision and ELI5 claim recall (ALCE datasets: "
        "llm unless given)."
    ),
]
ReferenceOpt = Annotated[
    str | None,
    typer.Option(
        help="Think&Cite R_g reference model: a GGUF file or openai:MODEL@BASE_URL. Without "
        "it the progress reward is R_a only (said in the trace)."
    ),
]


def _fail(message: str, code: int = 1) -> None:
    err.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def _is_llm_url(spec: str) -> bool:
    return spec == "llm-url" or spec.startswith("llm-url:")


def _with_reports(run: object, spec: str) -> object:
    """LLM-URL's reports (URLs, validity) and its URL-generation usage go into the trace."""
    if not _is_llm_url(spec):
        return run
    from searchain.retrieval.llm_url import with_retrieval_reports

    return with_retrieval_reports(run)  # type: ignore[arg-type]


def _open_retriever(
    spec: str, index: Path | None, dense_index: Path | None, llm: object = None
) -> object:
    from searchain.retrieval.factory import open_retriever

    needs_bm25 = spec in ("bm25", "hybrid") and index is None
    needs_dense = spec in ("dense", "hybrid") and dense_index is None
    demo = needs_bm25 or needs_dense
    try:
        with (
            err.status("Opening the index (demo indexes are built on first use)...")
            if demo
            else _null()
        ):
            return open_retriever(spec, index=index, dense_index=dense_index, llm=llm)
    except (FileNotFoundError, ValueError, RuntimeError, ImportError) as e:
        _fail(str(e))
    raise AssertionError("unreachable")


@app.command()
def index(
    corpus: Annotated[
        Path,
        typer.Argument(
            help="Corpus file: JSONL {id,title,text}, FlashRAG "
            "JSONL {id,contents}, DPR TSV, JSON (e.g. MuSiQue), HotpotQA; "
            "optionally .gz.",
            exists=True,
            dir_okay=False,
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory to write the index to.")],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Corpus format (default: detect). "
            "One of jsonl, flashrag, tsv, json (MuSiQue's corpus is json), hotpotqa.",
        ),
    ] = None,
    max_words: Annotated[
        int,
        typer.Option(
            help="Split documents into passages of about this many words (0 keeps them whole)."
        ),
    ] = 100,
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="bm25 (sparse, seconds) or dense (MiniLM sentence embeddings + FAISS; needs "
            "the dense extra; minutes per 10k passages on a laptop CPU). An interrupted dense "
            "build resumes where it stopped when run again with the same --out.",
        ),
    ] = "bm25",
    index_type: Annotated[
        str,
        typer.Option(
            "--index-type",
            help="Dense only: flat (exact; fine up to ~1M passages), hnsw or ivf (approximate, "
            "for bigger corpora), or any FAISS index_factory string.",
        ),
    ] = "flat",
    model: Annotated[
        Path | None,
        typer.Option(
            "--model",
            help="Dense only: a local sentence-transformers model directory "
            "(default: the packaged all-MiniLM-L6-v2).",
        ),
    ] = None,
    batch_size: Annotated[int, typer.Option(help="Dense only: passages per encode batch.")] = 64,
    json_out: JsonOpt = False,
) -> None:
    """Build a search index of a corpus: BM25 (default) or dense. Malformed lines are reported
    with file and line, and nothing is written in that case.

    Examples:

      searchain index corpus.jsonl -o idx/bm25

      searchain index corpus.jsonl -o idx/dense --kind dense --index-type hnsw

    Then: searchain ask "..." --index idx/bm25 --dense-index idx/dense --retriever hybrid
    """
    from searchain.retrieval import BM25Index, CorpusError

    if kind not in ("bm25", "dense"):
        _fail(f"--kind must be bm25 or dense, not {kind!r}")
    try:
        if kind == "dense":
            try:
                from searchain.retrieval import DenseIndex
            except ImportError as e:
                _fail(f"dense indexing needs the dense extra (pip install 'searchain[dense]'): {e}")
            idx = DenseIndex.from_corpus(
                corpus,
                out,
                fmt=fmt,
                max_words=max_words or None,
                index_type=index_type,
                model_path=model,
                batch_size=batch_size,
                show_progress=not json_out,
            )
        else:
            idx = BM25Index.from_corpus(
                corpus, out, fmt=fmt, max_words=max_words or None, show_progress=not json_out
            )
    except (CorpusError, FileExistsError, ValueError) as e:
        _fail(str(e))
    if json_out:
        print(json.dumps({"index": str(out), "kind": kind, "passages": len(idx)}))
    else:
        console.print(f"[green]Indexed {len(idx):,} passages ({kind}) into[/] {out}")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to search for.")],
    index: IndexOpt = None,
    retriever: RetrieverOpt = "bm25",
    dense_index: DenseIndexOpt = None,
    k: Annotated[int, typer.Option("-k", help="Number of passages.")] = 5,
    json_out: JsonOpt = False,
) -> None:
    """Search and show the top passages with their scores (BM25, cosine or fused)."""
    idx = _open_retriever(retriever, index, dense_index)
    hits: list[Passage] = idx.search(query, k=k)  # type: ignore[attr-defined]
    if json_out:
        print(json.dumps([p.to_dict() for p in hits], ensure_ascii=False, indent=2))
        return
    table = Table(show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("id / title")
    table.add_column("text")
    for i, p in enumerate(hits, 1):
        table.add_row(
            str(i), f"{p.score:.2f}", f"{p.id}\n[bold]{escape(p.title)}[/]", escape(p.text[:300])
        )
    console.print(table)


@app.command()
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
            "tree search; see --iterations, --nli, --reference). "
            "Baselines: [bold]direct-prompting[/], [bold]cot[/], [bold]self-ask[/] (follow-up "
            "questions answered by retrieve-then-read), [bold]self-ask-no-search[/], "
            "[bold]react[/] (Search[...]/Finish[...] loop), [bold]direct-retrieval[/] "
            "(= retrieve-read); SearChain ablations: [bold]searchain-no-ir[/], "
            "[bold]searchain-no-verification[/], [bold]searchain-no-completion[/]."
        ),
    ] = "searchain",
    task: Annotated[
        str, typer.Option(help="SearChain prompt family: multihop, yesno, factcheck, longform.")
    ] = "multihop",
    llm: Annotated[
        str,
        typer.Option(
            "--llm",
            help="[bold]local[/] (embedded GGUF model) or "
            "[bold]openai[/] (any OpenAI-compatible endpoint).",
        ),
    ] = "local",
    model: Annotated[str | None, typer.Option(help=MODEL_HELP)] = None,
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
    template: Annotated[
        Path | None,
        typer.Option(help="Your own CoQ prompt template file (first line '# fields: question')."),
    ] = None,
    reader: Annotated[
        str,
        typer.Option(
            help="SearChain reader: 'llm' or the path of a local DPR / SQuAD-style reader model."
        ),
    ] = "llm",
    theta: Annotated[
        float | None,
        typer.Option(
            help="Reader confidence threshold θ (default: the reader's calibrated value)."
        ),
    ] = None,
    r_max: Annotated[int, typer.Option(help="Maximum SearChain rounds.")] = 5,
    verification: Annotated[
        bool, typer.Option(help="Ablation: let IR correct the LLM's answers.")
    ] = True,
    completion: Annotated[
        bool, typer.Option(help="Ablation: let IR answer unsolved queries.")
    ] = True,
    ir: Annotated[bool, typer.Option(help="Ablation: --no-ir is SearChain without IR.")] = True,
    dedup_threshold: Annotated[
        float,
        typer.Option(
            help="Cosine similarity (MiniLM) at which a query counts as already processed."
        ),
    ] = 0.97,
    tools: ToolsOpt = None,
    max_depth: Annotated[int, typer.Option(help="REBEL: deepest level of subquestions.")] = 3,
    max_llm_calls: Annotated[
        int, typer.Option(help="REBEL: LLM calls per question (then it answers from the facts).")
    ] = 40,
    max_tool_calls: Annotated[int, typer.Option(help="REBEL: tool calls per question.")] = 12,
    memory_check: Annotated[
        str,
        typer.Option(
            help="REBEL: [bold]llm[/] (the paper: ask whether memory suffices) or "
            "[bold]never[/] (always use a tool)."
        ),
    ] = "llm",
    iterations: Annotated[
        int, typer.Option(help="Think&Cite: MCTS iterations (the paper's 30).")
    ] = 30,
    family: Annotated[
        str, typer.Option(help="Think&Cite demo family: asqa (factual), qampari (lists), eli5.")
    ] = "asqa",
    nli: NliOpt = "llm",
    reference: ReferenceOpt = None,
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
) -> None:
    """Answer a question with [n] citations to the passages that support it."""
    from searchain.llm import LLMError, make_llm
    from searchain.methods.base import traced
    from searchain.methods.registry import build_method

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)
    q = question or DEMO_QUESTION
    if question is None and not json_out:
        err.print(f"[dim]No question given; asking the demo question:[/] {q}")
    needs_ir = ir or method != "searchain"
    # LLM-URL needs the LLM, so it is opened after the client below.
    idx = None
    if needs_ir and not _is_llm_url(retriever):
        idx = _open_retriever(retriever, index, dense_index)
    try:
        client = make_llm(
            llm,
            model=model,
            base_url=base_url,
            api=api,
            model_path=str(model_path) if model_path else None,
            n_threads=threads,
            cache=cache,
        )
        if needs_ir and idx is None:
            idx = _open_retriever(retriever, index, dense_index, llm=client)
        options = {}
        if method == "searchain" or method.startswith("searchain-"):  # ablations too
            options = dict(
                task=task,
                theta=theta,
                r_max=r_max,
                verification=verification,
                completion=completion,
                use_ir=ir,
                template=str(template) if template else None,
                dedup_threshold=dedup_threshold,
            )
        elif method == "rebel":
            options = dict(
                tools=str(tools) if tools else None,
                max_depth=max_depth,
                max_llm_calls=max_llm_calls,
                max_tool_calls=max_tool_calls,
                memory_check=memory_check,
            )
        elif method == "thinkcite":
            options = dict(max_iterations=iterations, family=family,
                           nli=None if nli == "none" else nli, reference=reference)  # fmt: skip
        from searchain.methods.options import parse_method_options

        options.update(parse_method_options(option, [method])[method])
        runner = build_method(method, client, idx, k=k, reader=reader, **options)  # type: ignore[arg-type]
    except (LLMError, ValueError, ImportError, FileNotFoundError) as e:
        _fail(str(e))
    try:
        with err.status("Thinking...") if not json_out else _null():
            trace = _with_reports(traced(runner, client), retriever)(q)  # type: ignore[operator]
    except (LLMError, RuntimeError) as e:  # RetrievalError from a remote index is one
        _fail(str(e))
    if json_out:
        print(json.dumps(trace.to_dict(), ensure_ascii=False, indent=2))
        return
    if show_tree and trace.method == "rebel":
        from searchain.methods.rebel_render import recursion_tree

        console.print(recursion_tree(trace))
    elif show_tree:
        from searchain.render import tree_of_reasoning

        console.print(tree_of_reasoning(trace))
    show_trace(trace)
    for rep in trace.meta.get("retrieval", []):
        console.print(f"[bold]URLs the model named[/] ({rep['valid_urls']}/{rep['m']} fetched)")
        for u in rep["urls"]:
            console.print(f"  [dim]{u['status']:>10}[/] {escape(u.get('url') or u['raw'])}")


@app.command("serve-index")
def serve_index(
    index: IndexOpt = None,
    retriever: RetrieverOpt = "bm25",
    dense_index: DenseIndexOpt = None,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8001,
    allow_remote: Annotated[
        bool,
        typer.Option(
            help="Allow binding a non-loopback address (the service has no authentication)."
        ),
    ] = False,
) -> None:
    """Serve an index over HTTP so many workers share one copy: POST /v1/search,
    POST /v1/search_batch, and the ColBERTv2 API (GET /api/search?query=&k=) that DSP and the
    SearChain code speak. Use it with [bold]--retriever remote:http://HOST:PORT[/]."""
    from searchain.retrieval.service import serve

    if retriever.startswith("remote:"):
        _fail("serve-index serves a local index, not a remote one")
    r = _open_retriever(retriever, index, dense_index)
    err.print(f"Serving {retriever} on http://{host}:{port} (Ctrl-C to stop)")
    try:
        serve(r, host=host, port=port, allow_remote=allow_remote)  # type: ignore[arg-type]
    except ValueError as e:
        _fail(str(e))


@app.command("eval")
def eval_(
    dataset: Annotated[
        str,
        typer.Option(
            help="A dataset name (hotpotqa, musique, strategyqa, "
            "fever, nq, webq, ...) or a file path."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (re-run to resume).")],
    methods: Annotated[str, typer.Option(help="Comma-separated methods.")] = "searchain",
    limit: Annotated[int | None, typer.Option(help="Evaluate this many items.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the --limit subsample.")] = 0,
    concurrency: Annotated[int, typer.Option(help="Items answered at once.")] = 4,
    index: IndexOpt = None,
    retriever: RetrieverOpt = "bm25",
    dense_index: DenseIndexOpt = None,
    llm: Annotated[str, typer.Option("--llm", help="local or openai.")] = "local",
    model: Annotated[str | None, typer.Option(help=MODEL_HELP)] = None,
    base_url: Annotated[str | None, typer.Option(help="Endpoint for --llm openai.")] = None,
    api: Annotated[str, typer.Option(help=API_HELP)] = "auto",
    model_path: Annotated[Path | None, typer.Option(help=MODEL_PATH_HELP)] = None,
    cache: Annotated[bool, typer.Option(help="Use the on-disk LLM call cache.")] = True,
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            help="Passages per query (default: each method's own). Retrieval Recall@10 of "
            "direct-retrieval needs -k 10.",
        ),
    ] = None,
    tools: ToolsOpt = None,
    executor: Annotated[
        str,
        typer.Option(
            help="[bold]local[/] (threads in this process) or [bold]ray[/] (each item a Ray "
            "task; needs the ray extra). Results and resume are the same either way."
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Ray cluster to join for --executor ray (e.g. auto, ray://HOST:10001; "
            "default: start a local one). Workers need searchain installed."
        ),
    ] = None,
    nli: NliOpt = None,
    reference: ReferenceOpt = None,
    option: MethodOpt = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Also answer again the items whose last attempt failed (after a server "
            "outage, say). Every attempt stays in results.jsonl; reports use the last.",
        ),
    ] = False,
) -> None:
    """Run methods over a dataset into a run directory: every finished item is appended to
    results.jsonl (fsynced), failures are recorded and counted, and re-running the same
    command resumes where it stopped, even after kill -9.

    Methods: searchain, searchain-no-ir, searchain-no-verification, searchain-no-completion,
    retrieve-read (alias direct-retrieval), direct-prompting, cot, self-ask,
    self-ask-no-search, react, and the other methods of [bold]searchain ask --method[/]."""
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from searchain.eval.datasets import dataset_fingerprint, load_dataset
    from searchain.eval.metrics import score_item
    from searchain.eval.runner import (
        Item,
        RunConfigMismatch,
        environment_changes,
        prepare_run_dir,
        run,
        runtime_environment,
    )
    from searchain.llm import LLMError, make_llm
    from searchain.methods.base import traced
    from searchain.methods.registry import build_method

    try:
        examples = load_dataset(dataset, limit=limit, seed=seed)
    except (FileNotFoundError, ValueError) as e:
        _fail(str(e))
    names = [m.strip() for m in methods.split(",") if m.strip()]
    nli = _default_alce_judge(examples, nli, out)
    from searchain.methods.options import parse_method_options

    try:
        method_options = parse_method_options(option, names)
    except ValueError as e:
        _fail(str(e))
    config = {
        "dataset": dataset,
        "dataset_sha256": dataset_fingerprint(dataset)["sha256"],
        "limit": limit,
        "seed": seed,
        "methods": names,
        "llm": llm,
        "model": model,
        "base_url": base_url,
        "api": api,  # replaced by the form it resolved to, below
        "retriever": retriever,
        "index": str(index) if index else None,
        "dense_index": str(dense_index) if dense_index else None,
    }
    if k is not None:  # only when set, so earlier run directories keep their config hash
        config["k"] = k
    if model_path is not None:
        config["model_path"] = str(model_path)
    for key, value in (("nli", nli), ("reference", reference)):
        if value is not None:
            config[key] = value
    if option:  # only when given, so earlier run directories keep their config hash
        config["options"] = method_options
    if tools is not None:  # REBEL's tools file, by content
        import hashlib

        if not tools.is_file():
            _fail(f"tools file not found: {tools}")
        config["tools"] = {
            "path": str(tools),
            "sha256": hashlib.sha256(tools.read_bytes()).hexdigest(),
        }
    if executor not in ("local", "ray"):
        _fail(f"unknown executor {executor!r}; local or ray")
    if executor == "ray" and _is_llm_url(retriever):
        _fail("--executor ray does not support --retriever llm-url yet; use --executor local")
    r = None if _is_llm_url(retriever) else _open_retriever(retriever, index, dense_index)
    try:
        client = make_llm(llm, model=model, base_url=base_url, api=api, cache=cache,
                          model_path=str(model_path) if model_path else None)  # fmt: skip
        # The form the prompts took, not the flag: `auto` on a base model ran completions,
        # like the runs made before `auto` existed (their config hash stays valid).
        config["api"] = "chat" if client.form == "chat" else "completions"
        if r is None:  # LLM-URL asks the same LLM for URLs; keep page texts for doc recall
            import dataclasses

            r = _open_retriever(retriever, index, dense_index, llm=client)
            r.config = dataclasses.replace(r.config, keep_documents=True)  # type: ignore[attr-defined]
            _exclude_evaluated_demos(r, examples, config)
        # SearChain's prompt family follows the dataset's task (StrategyQA: yes/no, ...).
        family = examples[0].task if examples else "multihop"
        sc_task = family if family in ("yesno", "factcheck", "longform") else "multihop"
        tc = _thinkcite_eval_options(examples, nli, reference)
        opts = {n: {**_eval_options(n, sc_task, tools), **(tc if n == "thinkcite" else {}),
                    **method_options[n]} for n in names}  # fmt: skip
        built = {n: build_method(n, client, r, k=k, **opts[n]) for n in names}  # type: ignore[arg-type]
        judge = _eval_judge(nli, client)
        runners = {n: _with_reports(traced(m, client), retriever) for n, m in built.items()}
    except (LLMError, ValueError, ImportError) as e:
        _fail(str(e))
    from searchain.eval.methods import describe

    # What each name resolved to (ablation flags, k, templates...), so the manifest says it.
    config["method_config"] = {n: describe(m) for n, m in built.items()}
    environment = runtime_environment(client, r)
    try:
        changes = environment_changes(out, environment)
        prepare_run_dir(out, config, environment)
    except RunConfigMismatch as e:
        _fail(str(e))
    for change in changes:  # resumed, but its finished items may not compare with new ones
        err.print(f"[yellow]warning: resuming {out}: {change}[/yellow]")
    from searchain.eval.alce import alce_gold, alce_scores

    items = [Item(e.id, e.question, {"answers": e.answers, "label": e.label, "task": e.task,
                                     **alce_gold(e)}) for e in examples]  # fmt: skip

    def score(item: Item, trace: Trace) -> dict[str, float]:
        # The short answer for EM/F1, the whole final content for containment metrics.
        full = trace.final_content or trace.answer
        scores = score_item(full, item.gold, item.gold.get("task") or "open")
        if "em" in scores:
            short = score_item(trace.answer or full, item.gold, "open")
            scores["em"], scores["f1"] = short["em"], short["f1"]
        # Retrieval Recall@1/@10 (DPR has_answer) of direct-retrieval, LLM-URL's valid-URL share.
        from searchain.retrieval.llm_url.evaluation import retrieval_metrics

        scores.update(retrieval_metrics(trace, item.gold.get("answers") or []))
        scores.update(alce_scores(trace, item.gold, judge))  # ALCE datasets only
        return scores

    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
               "{task.total} done, {task.fields[failed]} failed"), TimeElapsedColumn(),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=err) as bar:
        task = bar.add_task("evaluating", total=None, failed=0)

        def progress(summary: object, total: int) -> None:
            bar.update(task, total=total, completed=summary.done + summary.failed,  # type: ignore[attr-defined]
                       failed=summary.failed)  # type: ignore[attr-defined]  # fmt: skip

        if executor == "ray":
            from searchain.eval.methods import MethodsSpec
            from searchain.eval.ray_executor import run_ray

            spec = MethodsSpec(
                tuple(names), llm=llm, model=model, base_url=base_url, api=config["api"],
                cache=cache, model_path=str(model_path) if model_path else None,
                retriever=retriever, index=str(index) if index else None,
                dense_index=str(dense_index) if dense_index else None, k=k,
                options=opts,
            )  # fmt: skip
            try:
                summary = run_ray(items, spec, out, address=ray_address, concurrency=concurrency,
                                  score=score, progress=progress,
                                  retry_failed=retry_failed)  # fmt: skip
            except ImportError as e:
                _fail(str(e))
        else:
            summary = run(items, runners, out, concurrency=concurrency, score=score,
                          progress=progress, retry_failed=retry_failed)  # fmt: skip
    result = {"run": str(out), "done": summary.done, "failed": summary.failed,
              "skipped": summary.skipped, "seconds": round(summary.seconds, 2)}  # fmt: skip
    console.print_json(json.dumps(result))


def _thinkcite_eval_options(
    examples: list, nli: str | None, reference: str | None
) -> dict[str, object]:
    """Think&Cite's demo family follows the dataset (QAMPARI lists, ELI5 why/how, else ASQA)."""
    from searchain.methods.thinkcite.prompting import family_for

    ex = examples[0] if examples else None
    fam = family_for(ex.task if ex else None, (ex.meta or {}).get("alce") if ex else None)
    return {"family": fam, "nli": None if nli == "none" else (nli or "llm"),
            "reference": reference}  # fmt: skip


def _default_alce_judge(examples: list, nli: str | None, out: Path) -> str | None:
    """ALCE datasets are scored on their citations too, as in the ALCE paper: without
    --nli the LLM judge does it. A run directory started before this default (its manifest
    has no judge) keeps going without one, so it still resumes."""
    if nli is not None or not examples or not (examples[0].meta or {}).get("alce"):
        return nli
    manifest = out / "manifest.json"
    if manifest.is_file():
        try:
            started = json.loads(manifest.read_text(encoding="utf-8")).get("config", {})
        except (OSError, ValueError):
            started = {"nli": None}  # unreadable: let the manifest check report it
        if "nli" not in started:
            err.print(f"{out} was started without an NLI judge: citation metrics stay off")
            return None
    err.print(
        "ALCE dataset: citation recall/precision by the LLM judge (--nli llm); give --nli "
        "PATH for a local NLI model, or --nli none to skip them"
    )
    return "llm"


def _eval_judge(nli: str | None, client: object) -> object:
    """The NLI judge of the ALCE citation metrics (None: those metrics are not computed)."""
    if nli is None or nli == "none":
        return None
    from searchain.readers.nli import make_judge

    return make_judge(nli, client)  # type: ignore[arg-type]


def _exclude_evaluated_demos(r: object, examples: list, config: dict[str, object]) -> None:
    """LLM-URL's few-shot demos never include an evaluated item (the packaged ones are MuSiQue
    train items, which `--dataset musique` evaluates): drop them, and say so in the manifest
    (only then, so run directories without an overlap keep their config hash)."""
    demos = r.exclude_demos([e.question for e in examples], [e.id for e in examples])  # type: ignore[attr-defined]
    if demos["excluded"]:
        config["llm_url_demos"] = demos
        err.print(
            f"LLM-URL: {len(demos['excluded'])} demo(s) are evaluated items and were left out; "
            f"the prompt shows {demos['shots']} other(s)"
        )


def _eval_options(method: str, sc_task: str, tools: Path | None) -> dict[str, object]:
    if method == "searchain" or method.startswith("searchain-"):  # and its ablations
        return {"task": sc_task}
    if method == "rebel" and tools is not None:
        return {"tools": str(tools)}
    return {}


@app.command()
def report(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories made by searchain eval.", exists=True, file_okay=False
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Also write report.md, report.csv and report.png here."),
    ] = None,
    csv_out: Annotated[bool, typer.Option("--csv", help="Print CSV instead of Markdown.")] = False,
    paired: Annotated[
        bool,
        typer.Option(
            "--paired",
            help="Score only the items every method of a run has finished (for a partial "
            "run: all methods on the same questions).",
        ),
    ] = False,
) -> None:
    """Compare runs: methods x metrics with 95 % bootstrap confidence intervals, then the
    SearChain paper's analyses of each run (efficiency of every method, knowledge sources of
    SearChain's nodes, effects of IR when a run holds searchain and searchain-no-ir).

    Example: searchain report runs/table-hotpotqa runs/table-musique --out runs/report"""
    from searchain.eval import report as rep

    loaded = rep.load(list(runs))
    if paired:
        loaded = [rep.paired(r) for r in loaded]
    for r in loaded:
        if counts := rep.unpaired(r):
            err.print(
                f"[yellow]{r.name}: the methods did not all answer the same items "
                f"({', '.join(f'{m} {n}' for m, n in counts.items())}); --paired compares "
                "them on the same items[/yellow]"
            )
    rows = rep.summarize(loaded)
    if not rows:
        _fail("no results in these run directories")
    extra = "" if csv_out else rep.analyses(loaded)
    print(rep.to_csv(rows) if csv_out else rep.markdown(rows) + ("\n" + extra if extra else ""))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(rep.markdown(rows) + ("\n" + extra if extra else ""))
        (out / "report.csv").write_text(rep.to_csv(rows))
        rep.bar_chart(rows, out / "report.png")
        err.print(f"wrote {out}/report.md, report.csv, report.png")


mirror_app = typer.Typer(
    help="An offline Wikipedia mirror, so LLM-URL runs for real without internet.",
    no_args_is_help=True,
)
app.add_typer(mirror_app, name="mirror")


@mirror_app.command("serve")
def mirror_serve(
    corpus: Annotated[
        list[Path] | None,
        typer.Option(
            "--corpus",
            "-c",
            help="Corpus file(s), any format `searchain index` reads (repeat the option). "
            "Documents are grouped into one article per title. Default: the bundled HotpotQA "
            "pool. Add e.g. ../shared/data/wikipedia/physics_articles_10.json for long pages.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    allow_remote: Annotated[
        bool, typer.Option(help="Allow binding a non-loopback address.")
    ] = False,
    latency: Annotated[
        float, typer.Option(help="Seconds to wait before every response (simulate a far host).")
    ] = 0.0,
) -> None:
    """Serve a corpus as Wikipedia-style HTML at /wiki/<Title> (301 redirects for other
    spellings of a title, 404 for missing ones). Point LLM-URL at it with
    [bold]--retriever llm-url:http://HOST:PORT[/]."""
    from searchain.retrieval import CorpusError
    from searchain.retrieval.demo import demo_corpus_path
    from searchain.retrieval.llm_url.mirror import MirrorCorpus, MirrorServer

    try:
        pages = MirrorCorpus.from_files(corpus or [demo_corpus_path()])
        server = MirrorServer(pages, host, port, allow_remote=allow_remote, latency_s=latency)
    except (CorpusError, ValueError, OSError) as e:
        _fail(str(e))
    err.print(f"Serving {len(pages):,} articles at {server.url}/wiki/<Title> (Ctrl-C to stop)")
    try:
        server.serve_forever()
    finally:
        server.stop()


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: object) -> None:
        return None


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
    for i, p in enumerate(trace.references, 1):
        tag = "" if i in cited else " [dim](not cited)[/]"
        if i in post:
            tag += " [dim](attributed post hoc)[/]"
        console.print(f"  [{i}] [bold]{escape(p.title)}[/] [dim]{escape(p.id)}[/]{tag}")
        console.print(f"      [dim]{escape(p.text[:200])}{'…' if len(p.text) > 200 else ''}[/]")
    for e in trace.errors:
        console.print(f"[yellow]warning:[/] {escape(e)}")
    u = trace.usage
    console.print(
        f"[dim]{u.llm_calls} LLM call(s), {u.cached_calls} cached, {u.prompt_tokens} prompt + "
        f"{u.completion_tokens} completion tokens, {trace.wall_seconds:.1f}s"
        f"{', ' + form + ' form' if (form := trace.meta.get('prompt_form')) else ''}[/]"
    )


# `searchain serve` lives with the service; importing it does not import FastAPI.
from searchain.server.command import serve as _serve  # noqa: E402

app.command("serve")(_serve)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
