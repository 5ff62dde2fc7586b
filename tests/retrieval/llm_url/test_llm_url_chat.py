"""LLM-URL on a chat model: the chat form of the URL prompt (system rule, demos as
user/assistant pairs, the question last), the parsing of chat replies (fast tests on replies
the real 0.5B instruct model wrote), and the real model naming Wikipedia URLs for WebQuestions
questions, fetched from the offline mirror (no network)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from searchain.llm import LLM
from searchain.llm.base import GenerationParams
from searchain.methods import RetrieveRead
from searchain.methods.base import traced
from searchain.retrieval.llm_url import (
    FetchConfig,
    LLMURLConfig,
    LLMURLRetriever,
    MirrorCorpus,
    MirrorServer,
    build_prompt,
    generate_urls,
    load_demos,
    with_retrieval_reports,
)
from searchain.retrieval.llm_url.generate import PRIMER, build_messages
from searchain.retrieval.llm_url.retriever import generation_of
from searchain.retrieval.llm_url.urls import extract_chat_urls, unwrap_chat_reply
from searchain.types import Completion, CompletionResult, Passage, Trace, Usage

W = "https://en.wikipedia.org/wiki/"
WELL_FORMED = re.compile(r"https://en\.wikipedia\.org/wiki/[^\s#?<>\[\]{}|]+")

# -- the chat form of the prompt -------------------------------------------------------------


def test_zero_shot_messages() -> None:
    msgs = build_messages("what does  jamaican people speak?", 3)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert PRIMER + "/" in msgs[0]["content"] and "one per line" in msgs[0]["content"]
    assert msgs[1]["content"] == (
        "what does jamaican people speak? Which 3 Wikipedia URLs would have the answer?"
    )
    assert build_messages("Q?", 1)[-1]["content"] == "Q? Which Wikipedia URL has the answer?"
    with pytest.raises(ValueError):
        build_messages("Q?", 0)


def test_few_shot_messages_are_user_assistant_pairs() -> None:
    demos = load_demos(d=10)
    msgs = build_messages("Who wrote Hamlet?", 5, demos)
    assert [m["role"] for m in msgs] == ["system"] + ["user", "assistant"] * 10 + ["user"]
    assert "examples" in msgs[0]["content"]
    for d, user, reply in zip(demos, msgs[1::2], msgs[2::2], strict=False):
        n = len(d.urls)
        asked = "Which Wikipedia URL has the answer?" if n == 1 else f"Which {n} Wikipedia"
        assert user["content"].startswith(d.question) and asked in user["content"]
        assert reply["content"].split("\n") == list(d.urls)
    assert msgs[-1]["content"] == "Who wrote Hamlet? Which 5 Wikipedia URLs would have the answer?"
    # The completion form is untouched: it still ends with the primer the model continues.
    assert build_prompt("Who wrote Hamlet?", 5, demos).endswith("\n" + PRIMER)


# -- parsing chat replies --------------------------------------------------------------------

# Replies the real Qwen2.5-Coder-0.5B-Instruct wrote (greedy) to WebQuestions questions, with
# the plain paper prompt or asked for markdown / a code block, and what must be read out of
# them: (reply, usable titles in order, statuses of all candidates, duplicates).
OBSERVED = [
    # Preamble, numbered list, epilogue; a repeated URL.
    ("Jamaican people speak English. The Wikipedia URLs that would have the answer are:\n\n"
     "1. https://en.wikipedia.org/wiki/Jamaican_people\n"
     "2. https://en.wikipedia.org/wiki/Jamaican_language\n"
     "3. https://en.wikipedia.org/wiki/Jamaican_language\n\n"
     "These URLs provide the most accurate and up-to-date information about Jamaican people "
     "and their language.", ["Jamaican people", "Jamaican language"], ["ok", "ok"], 1),
    # Markdown links to an invented site with a space in its host: nothing usable.
    ("The Oregon Ducks 2012 football schedule is as follows:\n\n"
     "1. [Oregon Ducks 2012 Official Website](https://www.oregon Ducks.com/2012/football-schedule)"
     "\n\n2. [Oregon Ducks 2012 Official Website](https://www.oregon Ducks.com/2012/football-"
     "schedule)", [], ["off_domain", "off_domain"], 0),
    # Bulleted markdown links; the link text has an apostrophe, the title a full stop.
    ("- [MR. Sugihara's death](https://en.wikipedia.org/wiki/MR._Sugihara)\n"
     "- [MR. Sugihara's life](https://en.wikipedia.org/wiki/MR._Sugihara)",
     ["MR. Sugihara"], ["ok"], 1),
    # A URL ending a sentence; a URL with a fragment.
    ("Ken Barlow is played by Ken Barlow in Coronation Street. The Wikipedia URL for this "
     "information is: https://en.wikipedia.org/wiki/Ken_Barlow.", ["Ken Barlow"], ["ok"], 0),
    ("mozart wrote his four horn concertos for the opera \"The Nightingale\" by William "
     "Shakespeare. The Wikipedia URL for this information is: "
     "https://en.wikipedia.org/wiki/William_Shakespeare#Opera_the_Nightingale",
     ["William Shakespeare"], ["ok"], 0),
    # A code fence with comments around the URLs.
    ("```python\n# The Wikipedia URL for Jamarcus Russellell is "
     "https://en.wikipedia.org/wiki/Jamarcus_Russell\n# The Wikipedia URL for Jamarcus "
     "Russellell's birthplace is https://en.wikipedia.org/wiki/Jamarcus_Russell#Birthplace\n```",
     ["Jamarcus Russell"], ["ok"], 1),
    # Markdown links whose text is a whole sentence, full stop included.
    ("[The invention of the telephone was invented by Charles Babbage in 1776.]"
     "(https://en.wikipedia.org/wiki/Charles_Babbage)\n\n[The invention of the steam engine "
     "was invented by John Watt in 1825.](https://en.wikipedia.org/wiki/John_Watt)",
     ["Charles Babbage", "John Watt"], ["ok", "ok"], 0),
    ("George Washington Carver was born in Washington, D.C., in 1789. Here are the two "
     "Wikipedia URLs that would have the answer:\n\n1. [George Washington Carver's birthplace]"
     "(https://en.wikipedia.org/wiki/George_Washington_Carver)\n2. [George Washington Carver's "
     "birthplace](https://en.wikipedia.org/wiki/George_Washington_Carver)",
     ["George Washington Carver"], ["ok"], 1),
    # The chat prompt's own replies (few-shot): plain lines, one URL repeated.
    ("\n".join([f"{W}James_K_Polk"] * 5), ["James K Polk"], ["ok"], 4),
    # A refusal; prose with no URL at all.
    ("I'm sorry, but I can't assist with that.", [], [], 0),
    ("- Ken Barlow plays in Coronation Street, a British sitcom that aired from 2009 to 2011.",
     [], [], 0),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "titles", "statuses", "dups"), OBSERVED)
def test_real_chat_replies_are_parsed(reply: str, titles, statuses, dups: int) -> None:
    ex = extract_chat_urls(reply, m=5)
    assert [u.title for u in ex.urls] == titles
    assert [c.status for c in ex.candidates] == statuses
    assert ex.duplicates == dups
    assert all(WELL_FORMED.fullmatch(u.url or "") for u in ex.urls)


# Chat habits the brief names that the 0.5B model did not happen to show.
HABITS = [
    # A markdown link whose text is the URL too (the "](" would glue them), with a title.
    (f"[{W}Paris]({W}Paris \"Paris\")", ["Paris"]),
    (f"[Oklahoma!]({W}Oklahoma!) and ![map]({W}Kiss_and_Tell_(1945_film))",
     ["Oklahoma", "Kiss and Tell (1945 film)"]),
    # Markdown escapes inside a URL.
    (r"1. https://en.wikipedia.org/wiki/Kiss\_and\_Tell\_\(1945\_film\)",
     ["Kiss and Tell (1945 film)"]),
    # Bold, angle brackets, inline code, trailing punctuation, a bare host.
    (f"**{W}Jamaica**, <{W}Jamaican_Patois>; `{W}Patois`. en.wikipedia.org/wiki/Creole!",
     ["Jamaica", "Jamaican Patois", "Patois", "Creole"]),
    # Relative article links, as a link target or a list item.
    ("- [Paris](/wiki/Paris)\n2. wiki/Rome\n* /wiki/Oslo", ["Paris", "Rome", "Oslo"]),
    # Full-width punctuation straight after a URL.
    (f"{W}Paris，{W}Rome。{W}Oslo、", ["Paris", "Rome", "Oslo"]),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "titles"), HABITS)
def test_chat_habits_are_unwrapped(reply: str, titles: list[str]) -> None:
    assert [u.title for u in extract_chat_urls(reply, m=10).urls] == titles


def test_hostile_urls_in_markdown_stay_unusable() -> None:
    reply = (
        "[meta](http://169.254.169.254/latest/meta-data)\n"
        "[trick](https://en.wikipedia.org@10.0.0.1/wiki/Y)\n"
        "[local](http://127.0.0.1:8080/wiki/X)\n[js](javascript:alert(1))\n"
        f"[special]({W}Special:Random)\n[ok]({W}Real)"
    )
    ex = extract_chat_urls(reply, m=10)
    assert [c.status for c in ex.candidates] == [
        "off_domain", "malformed", "off_domain", "malformed", "ok"
    ]  # fmt: skip
    assert [u.title for u in ex.urls] == ["Real"]
    # Unwrapping only removes markup: it never invents a host for an absolute URL.
    assert "169.254.169.254" in unwrap_chat_reply(reply)


# -- generate_urls and the retriever with a chat client --------------------------------------


class ScriptedChat(LLM):
    """A chat-form client replying from a script; records messages and parameters."""

    backend = "scripted"
    form = "chat"

    def __init__(self, replies: list[tuple[str, str]]) -> None:
        super().__init__("scripted")
        self.replies = list(replies)
        self.calls: list[tuple[Any, GenerationParams]] = []

    def _chat(self, messages: list[dict[str, str]], params: GenerationParams) -> CompletionResult:
        self.calls.append((messages, params))
        text, finish = self.replies.pop(0)
        return CompletionResult([Completion(text, finish)], Usage(prompt_tokens=1))

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        raise AssertionError("a chat-form client must not get completion prompts")


def test_generate_urls_sends_messages_and_drops_a_cut_line() -> None:
    # The real zero-shot reply to WebQ 0 looped on one URL until the token limit cut it.
    looped = "\n".join([f"{W}Jamaican_people", f"{W}Jamaican_language", f"{W}Jamaican_culture"]
                       + [f"{W}Jamaican_language"] * 17 + ["https://en"])  # fmt: skip
    llm = ScriptedChat([(looped, "length")])
    gen = generate_urls(llm, "what does jamaican people speak?", 5)
    [(messages, params)] = llm.calls
    assert messages == build_messages("what does jamaican people speak?", 5)
    assert params.temperature == 0.0 and params.stop == () and params.max_tokens >= 5 * 32
    assert gen.form == "chat" and gen.messages == messages and gen.completion == looped
    assert [u.title for u in gen.extraction.urls] == [
        "Jamaican people", "Jamaican language", "Jamaican culture"
    ]  # fmt: skip
    assert [c.status for c in gen.extraction.candidates] == ["ok"] * 3  # "https://en" dropped
    assert not gen.errors and gen.to_dict()["prompt_form"] == "chat"


def test_reply_without_urls_is_an_error_with_the_text_kept(mirror: MirrorServer, tmp_path):
    refusal = "I'm sorry, but I can't assist with that."
    llm = ScriptedChat([(refusal, "stop")])
    r = LLMURLRetriever(llm, LLMURLConfig(m=3, shots=2, fetch=fetch_config(mirror, tmp_path)))

    def run(question: str) -> Trace:
        trace = Trace(question=question, method="probe")
        trace.references = r.search(question, k=3)
        return trace

    trace = with_retrieval_reports(run)("what did james k polk do before he was president?")
    [report] = trace.meta["retrieval"]
    assert report["prompt_form"] == "chat" and report["completion"] == refusal
    assert report["urls"] == [] and report["valid_urls"] == 0 and not trace.references
    assert len(trace.errors) == 1 and "no usable Wikipedia URL" in trace.errors[0]
    assert refusal in trace.errors[0] and report["errors"] == trace.errors
    [(messages, _)] = llm.calls
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant",
                                             "user"]  # fmt: skip


def test_chat_generation_through_the_mirror(mirror: MirrorServer, tmp_path: Path) -> None:
    reply = OBSERVED[0][0]  # the real numbered-list reply
    r = LLMURLRetriever(None, LLMURLConfig(m=5, fetch=fetch_config(mirror, tmp_path)))  # type: ignore[arg-type]
    result = r.from_generation(
        "what does jamaican people speak?", generation_of(reply, 5, chat=True)
    )
    assert result.report["prompt_form"] == "chat"
    assert [(u["title"], u["status"]) for u in result.report["urls"]] == [
        ("Jamaican people", "fetched"), ("Jamaican language", "not_found")
    ]  # fmt: skip
    assert result.passages and result.passages[0].title == "Jamaican people"


# -- the real 0.5B chat model ----------------------------------------------------------------

PAGES = {
    "Jamaican people": "Jamaicans are the citizens of Jamaica. Most Jamaicans speak Jamaican "
    "Patois and Jamaican English.",
    "Jamaican Patois": "Jamaican Patois, known locally as Patois, is an English-based creole "
    "language spoken primarily in Jamaica.",
    "James K. Polk": "James Knox Polk was the 11th president of the United States. Before his "
    "presidency he was a lawyer, Speaker of the House and Governor of Tennessee.",
    "2012 Oregon Ducks football team": "The 2012 Oregon Ducks football team represented the "
    "University of Oregon in the 2012 NCAA Division I FBS football season.",
}


@pytest.fixture(scope="module")
def mirror():
    corpus = MirrorCorpus(Passage(id=t, text=x, title=t) for t, x in PAGES.items())
    with MirrorServer(corpus) as server:
        yield server


def fetch_config(mirror: MirrorServer, tmp_path: Path) -> FetchConfig:
    return FetchConfig(base_url=mirror.url, cache_dir=str(tmp_path), retries=0)


@pytest.mark.slow
def test_real_chat_model_names_wikipedia_urls_for_webq(
    chat_llm, mirror: MirrorServer, data_dir: Path, tmp_path: Path
) -> None:
    """Few-shot (the 10 packaged MuSiQue-train demos), m = 5, three WebQuestions questions:
    every reply yields at least one well-formed en.wikipedia.org article URL, each fetched
    from the offline mirror or found missing there, as the mirror says."""
    with (data_dir / "webq" / "webq-test.jsonl").open() as f:
        questions = [json.loads(next(f))["question"] for _ in range(3)]
    r = LLMURLRetriever(chat_llm, LLMURLConfig(m=5, fetch=fetch_config(mirror, tmp_path)))
    assert r.demo_summary()["shots"] == 10
    before = len(mirror.requests)
    # The first question through a method (URL generation + the chat reader), the others
    # through the retriever alone: 4 model calls.
    trace = with_retrieval_reports(traced(RetrieveRead(chat_llm, r, k=3), chat_llm))(questions[0])
    assert trace.meta["prompt_form"] == "chat" and trace.answer
    assert trace.usage.llm_calls + trace.usage.cached_calls == 2
    assert [c["kind"] for c in trace.meta["llm_calls"]] == ["chat", "chat"]
    assert trace.meta["llm_calls"][0]["output"] == trace.meta["retrieval"][0]["completion"]
    reports = [trace.meta["retrieval"][0]] + [r.retrieve(q, k=3).report for q in questions[1:]]
    counts = []
    for q, report in zip(questions, reports, strict=True):
        assert report["prompt_form"] == "chat" and report["query"] == q
        usable = [u for u in report["urls"] if u.get("url")]
        print(f"{q!r}: {len(usable)} usable URL(s) {[u['url'] for u in usable]} "
              f"from {report['completion']!r}")  # fmt: skip
        counts.append(len(usable))
        assert 1 <= len(usable) <= 5, report["completion"]
        assert "errors" not in report
        for u in usable:
            assert WELL_FORMED.fullmatch(u["url"]) and u["title"] and "_" not in u["title"]
            assert u["status"] in ("fetched", "not_found")
            assert (mirror.corpus.resolve(u["title"]) is not None) == (u["status"] == "fetched")
        assert report["valid_urls"] == sum(u["status"] == "fetched" for u in report["urls"])
    assert all(p.startswith("/wiki/") for p in mirror.requests[before:])  # only the mirror
    # "Jamaican people" (named in every reply to WebQ 0 we saw) is on the mirror.
    assert sum(rep["valid_urls"] for rep in reports) >= 1
    fetched = {d["title"] for d in reports[0]["documents"]}
    assert trace.references and {p.title for p in trace.references} <= fetched
    print("usable URLs per question:", counts, "answer:", repr(trace.answer))
