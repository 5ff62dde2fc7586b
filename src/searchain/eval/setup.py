"""What an evaluation sets up besides what it was told: each method's options from the data
set (its task, Think&Cite's demo family, REBEL's tools), the ALCE judge default, LLM-URL's
demo exclusion, and per-question passage pools for data sets that ship them. What it has to
say goes to ``say`` (the CLI's stderr)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def print_note(message: str) -> None:
    """What an evaluation says when no one asked for its notes: stderr."""
    print(message, file=sys.stderr)


def thinkcite_eval_options(
    examples: list, nli: str | None, reward_pair: dict[str, str | None]
) -> dict[str, object]:
    """Think&Cite's demo family follows the dataset (QAMPARI lists, ELI5 why/how, else ASQA)."""
    from searchain.methods.thinkcite.prompting import family_for

    ex = examples[0] if examples else None
    fam = family_for(ex.task if ex else None, (ex.meta or {}).get("alce") if ex else None)
    given = {k: v for k, v in reward_pair.items() if v is not None}  # else the defaults
    return {"family": fam, "nli": nli or "llm", **given}  # "none": R_a off


def default_alce_judge(
    examples: list, nli: str | None, out: Path, say: Callable[[str], None] = print_note
) -> str | None:
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
            say(f"{out} was started without an NLI judge: citation metrics stay off")
            return None
    say(
        "ALCE dataset: citation recall/precision by the LLM judge (--nli llm); give --nli "
        "PATH for a local NLI model, or --nli none to skip them"
    )
    return "llm"


def eval_judge(nli: str | None, client: object) -> object:
    """The NLI judge of the ALCE citation metrics (None: those metrics are not computed)."""
    if nli is None or nli == "none":
        return None
    from searchain.readers.nli import make_judge

    return make_judge(nli, client)  # type: ignore[arg-type]


def exclude_evaluated_demos(
    r: object,
    examples: list,
    config: dict[str, object],
    say: Callable[[str], None] | None = None,
) -> None:
    """LLM-URL's few-shot demos come from the evaluated data set's train split where one is
    packaged (WebQ), else MuSiQue-train's, said on stderr and in every retrieval report; they
    never include an evaluated item (`--dataset musique` evaluates the MuSiQue train sample):
    those are dropped, and the manifest says so (only then, and only for demos other than
    MuSiQue's, so earlier run directories keep their config hash)."""
    name = str(config.get("dataset", ""))
    # "webq", "webq-train" or a file such as webq-test.jsonl: the data set is the first word
    family = (Path(name).stem if Path(name).suffix else name).split("-")[0].lower()
    say = say or print_note
    note = r.demos_for_dataset(family)  # type: ignore[attr-defined]
    if note:
        say(f"LLM-URL: {note}")
    if r.demo_source != "musique":  # type: ignore[attr-defined]
        config["llm_url_demos_from"] = r.demo_source  # type: ignore[attr-defined]
    demos = r.exclude_demos([e.question for e in examples], [e.id for e in examples])  # type: ignore[attr-defined]
    if demos["excluded"]:
        config["llm_url_demos"] = demos
        say(
            f"LLM-URL: {len(demos['excluded'])} demo(s) are evaluated items and were left out; "
            f"the prompt shows {demos['shots']} other(s)"
        )


def question_pools(examples: list, wanted: bool | None) -> Any:
    """A :class:`~searchain.retrieval.pools.QuestionPools` over the items' own passages
    (ALCE ``docs``) when every item has them and ``wanted`` is not False (None: auto), else
    None. ``wanted=True`` without docs on every item is an error."""
    from searchain.retrieval.pools import QuestionPools, pool_passages

    have = [e for e in examples if (e.meta or {}).get("docs")]
    if wanted is False or (wanted is None and (not have or len(have) < len(examples))):
        return None
    if len(have) < len(examples):
        missing = len(examples) - len(have)
        raise ValueError(
            f"--question-docs: {missing} of {len(examples)} items carry no docs of their own"
        )
    return QuestionPools({e.question: pool_passages(e.id, e.meta["docs"]) for e in examples})


def in_pools(pools: Any, runner: Callable[[str], Any]) -> Callable[[str], Any]:
    """``runner`` answering each question over that question's own pool."""

    def run(question: str) -> Any:
        with pools.answering(question):
            return runner(question)

    return run
