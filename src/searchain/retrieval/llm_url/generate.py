"""Step 1 of LLM-URL: ask the model which m Wikipedia URLs would have the answer.

The prompt is the question, the paper's instruction ("Which m Wikipedia URLs would have the
answer?"; "Which Wikipedia URL has the answer?" for m = 1) and the URL prefix
``https://en.wikipedia.org/wiki`` as a primer the model continues, greedily. Few-shot prompts
put d (question, gold URLs) demonstrations first; the packaged ones come from the MuSiQue
*train* sample (``scripts/make_llm_url_demos.py``), which ``searchain eval --dataset musique``
also serves, so an evaluation excludes the items it evaluates from the demos
(:meth:`~searchain.retrieval.llm_url.retriever.LLMURLRetriever.exclude_demos`; matched by id
or by :func:`question_key`). The templates are data files in ``searchain/prompts/llm_url/``.

Chat models get the chat form (:func:`build_messages`): the instruction and the URL format as
the system message, each demo as a user turn (its question and instruction) answered by an
assistant turn (its URLs, one per line), the question as the last user turn. A chat reply
does not continue the primer, so it is read whole, its markdown unwrapped
(:func:`~searchain.retrieval.llm_url.urls.extract_chat_urls`); the URLs then go through the
same validation as a base model's. A reply that names no usable URL is an error of the
generation (:attr:`Generation.errors`), its text kept.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from searchain import prompts
from searchain.llm import LLM
from searchain.llm.base import Message
from searchain.llm.prompting import is_chat
from searchain.retrieval.llm_url.urls import Extraction, extract_chat_urls, extract_urls
from searchain.types import Usage

PRIMER = "https://en.wikipedia.org/wiki"
MAX_M = 10
TOKENS_PER_URL = 32  # a URL line is ~10 tokens of prefix plus the title
CHAT_EXTRA_TOKENS = 64  # a chat reply may open with "Here are the URLs:" and use markdown


@dataclass(frozen=True, slots=True)
class Demo:
    question: str
    urls: tuple[str, ...]
    id: str = ""  # the source item's id (packaged demos: the MuSiQue id), "" if unknown


def question_key(question: str) -> str:
    """A question as compared for demo exclusion: NFKC, case-folded, punctuation and
    whitespace runs made one space (``"Who is X?"`` and ``"who is  x"`` are one question)."""
    text = unicodedata.normalize("NFKC", question).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def without(demos: Iterable[Demo], questions: Iterable[str], ids: Iterable[str] = ()) -> list[Demo]:
    """``demos`` less those whose id is in ``ids`` or whose question is among ``questions``."""
    keys = {question_key(q) for q in questions}
    id_set = {str(i) for i in ids if i}
    return [
        d for d in demos if not (d.id and d.id in id_set) and question_key(d.question) not in keys
    ]


def instruction(m: int) -> str:
    return (
        "Which Wikipedia URL has the answer?"
        if m == 1
        else (f"Which {m} Wikipedia URLs would have the answer?")
    )


# The packaged demo sets, by the data set whose *train* split they come from
# (scripts/make_llm_url_demos.py): an evaluation shows the evaluated data set's own.
DEMO_SETS = {"musique": "demos.jsonl", "webq": "demos_webq.jsonl"}
DEFAULT_DEMOS = "musique"


def load_demos(path: str | Path | None = None, d: int | None = 10) -> list[Demo]:
    """The first ``d`` demos (``None``: all) of a JSONL file of ``{"question", "urls": [...],
    "id"?}``, or of a packaged set named by its data set (:data:`DEMO_SETS`; default: the
    MuSiQue-train demos)."""
    if path is None or str(path) in DEMO_SETS:
        name = DEMO_SETS[str(path or DEFAULT_DEMOS)]
        text = (resources.files("searchain.prompts") / "llm_url" / name).read_text(encoding="utf-8")
        where = f"packaged {name}"
    else:
        text = Path(path).read_text(encoding="utf-8")
        where = str(path)
    demos: list[Demo] = []
    if d == 0:
        return demos
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            demo = Demo(
                str(obj["question"]), tuple(str(u) for u in obj["urls"]), str(obj.get("id") or "")
            )
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ValueError(f"{where} line {n}: expected {{question, urls}} ({e})") from None
        if not demo.urls:
            raise ValueError(f"{where} line {n}: a demo needs at least one URL")
        demos.append(demo)
        if len(demos) == d:
            break
    return demos


def _check_m(m: int) -> None:
    if not 1 <= m <= MAX_M:
        raise ValueError(f"m must be between 1 and {MAX_M}, got {m}")


def build_prompt(question: str, m: int, demos: list[Demo] | None = None) -> str:
    """The completion prompt; it ends with :data:`PRIMER`, which the model continues."""
    _check_m(m)
    question = " ".join(question.split())
    if not demos:
        return prompts.fill(
            "llm_url/zero_shot", question=question, instruction=instruction(m), primer=PRIMER
        )
    shown = "\n\n".join(
        prompts.fill(
            "llm_url/demo",
            question=d.question,
            instruction=instruction(len(d.urls)),
            urls="\n".join(d.urls),
        )
        for d in demos
    )
    return prompts.fill(
        "llm_url/few_shot",
        demos=shown,
        question=question,
        instruction=instruction(m),
        primer=PRIMER,
    )


def build_messages(question: str, m: int, demos: list[Demo] | None = None) -> list[Message]:
    """The chat form: the system message, each demo as a user/assistant pair, then the
    question as the last user turn (zero-shot: the system message and the question)."""
    _check_m(m)
    question = " ".join(question.split())
    name = "llm_url/few_shot" if demos else "llm_url/zero_shot"
    head = prompts.messages(name, question=question, instruction=instruction(m), primer=PRIMER)
    shown = [
        turn
        for d in demos or ()
        for turn in prompts.messages(
            "llm_url/demo",
            question=" ".join(d.question.split()),
            instruction=instruction(len(d.urls)),
            urls="\n".join(d.urls),
        )
    ]
    return [*head[:-1], *shown, head[-1]]


@dataclass(slots=True)
class Generation:
    """What the model wrote and the URLs taken from it."""

    prompt: str  # the completion prompt ("" for a chat generation: see ``messages``)
    completion: str  # the model's text (the primer's continuation, or the whole chat reply)
    extraction: Extraction
    usage: Usage = field(default_factory=Usage)
    form: str = "completion"  # or "chat"
    messages: list[Message] | None = None  # the chat form's messages
    errors: list[str] = field(default_factory=list)  # e.g. a chat reply with no usable URL

    def to_dict(self) -> dict[str, Any]:
        return {
            "completion": self.completion,
            "candidates": [c.to_dict() for c in self.extraction.candidates],
            "duplicates": self.extraction.duplicates,
            "prompt_form": self.form,
            **({"errors": self.errors} if self.errors else {}),
        }


def _complete_lines(text: str, finish: str) -> str:
    """The token limit cut the last line mid-URL ("https://en.wik"): not a URL it meant."""
    if finish == "length" and "\n" in text:
        return text[: text.rindex("\n")]
    return text


def generate_urls(
    llm: LLM,
    question: str,
    m: int = 10,
    *,
    demos: list[Demo] | None = None,
    allowed_hosts: tuple[str, ...] = ("en.wikipedia.org",),
) -> Generation:
    """Prompt greedily and extract at most ``m`` usable URLs (the primer counts as written).
    A chat model (:func:`~searchain.llm.prompting.is_chat`) gets :func:`build_messages`."""
    if is_chat(llm):
        return _generate_chat(llm, question, m, demos, allowed_hosts)
    prompt = build_prompt(question, m, demos)
    result = llm.complete(
        prompt,
        max_tokens=TOKENS_PER_URL * m,
        temperature=0.0,
        # A blank line ends the list; a new question means the model is inventing demos.
        stop=("\n\n",),
    )
    completion = result.text
    finish = result.completions[0].finish_reason if result.completions else "stop"
    written = _complete_lines(completion, finish)
    extraction = extract_urls(PRIMER + written, m=m, allowed_hosts=allowed_hosts)
    return Generation(prompt, completion, extraction, result.usage)


def _generate_chat(
    llm: LLM, question: str, m: int, demos: list[Demo] | None, allowed_hosts: tuple[str, ...]
) -> Generation:
    messages = build_messages(question, m, demos)
    # One reply turn: it ends where the model ends it (no stop strings: a chat model may put
    # a blank line after a preamble, before the list).
    result = llm.chat(messages, max_tokens=TOKENS_PER_URL * m + CHAT_EXTRA_TOKENS, temperature=0.0)
    reply = result.text
    finish = result.completions[0].finish_reason if result.completions else "stop"
    extraction = extract_chat_urls(_complete_lines(reply, finish), m=m, allowed_hosts=allowed_hosts)
    gen = Generation("", reply, extraction, result.usage, form="chat", messages=messages)
    if not extraction.urls:
        found = len(extraction.candidates)
        gen.errors.append(
            "llm-url: the chat reply names no usable Wikipedia URL"
            + (f" ({found} unusable: {extraction.candidates[0].reason})" if found else "")
            + f"; reply: {reply.strip()[:200]!r}"
        )
    return gen
