"""SearChain keeps each round's prompt inside the model's context window.

The growing completion prompt (every earlier round, its chain and feedback) once passed the
embedded model's 4,096 tokens on a HotpotQA question, and the item failed. Now earlier rounds
are dropped when that makes the prompt fit, and the rounds stop when nothing fits. These tests
use the real model's tokenizer and context; the end-to-end one replays the recorded round 1
and generates the rest with the real model.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from recordings import DIR
from searchain import prompts
from searchain.llm import CachedLLM, JsonlStore
from searchain.llm.base import context_window, prompt_fits
from searchain.llm.local import DEFAULT_MODEL_NAME, LocalLLM
from searchain.methods.catalog import make_embedder
from searchain.methods.searchain import TASKS, SearChain, SearChainConfig
from searchain.methods.searchain.rounds import CompletionRounds, FeedbackText
from searchain.readers.llm_reader import LLMReader
from searchain.retrieval import BM25Index
from searchain.types import Node, Passage, Trace


def _llm_with_context(n_ctx: int) -> LocalLLM:
    llm = LocalLLM(n_ctx=n_ctx)
    assert context_window(llm) == n_ctx  # llama.cpp keeps a multiple of 256 as given
    return llm


def test_prompt_fits_sees_through_wrappers_and_is_unknown_without_a_model() -> None:
    llm = _llm_with_context(512)
    short, long = "The capital of France is", "word " * 600
    assert prompt_fits(llm, short, 32) is True
    assert prompt_fits(llm, long, 32) is False
    n = len(llm.tokenize(short))
    assert prompt_fits(llm, short, 512 - n) is True and prompt_fits(llm, short, 513 - n) is False
    cached = CachedLLM(llm, JsonlStore(Path("/dev/null")))
    assert prompt_fits(cached, long, 32) is False
    replay = CachedLLM(None, JsonlStore(Path("/dev/null")), backend="local", model="m")
    assert prompt_fits(replay, long, 32) is None  # no tokenizer here: not checked


QUESTION = "Who directed the film in which Roy Scheider played Martin Brody?"


def _rounds(
    llm: LocalLLM, revise: bool = False
) -> tuple[CompletionRounds, Trace, list[Node], FeedbackText]:
    # revise=False: the reader's g is restated and the model continues at [Query n+1]
    # (what these tests were written for); the paper's cue is checked on its own below.
    rounds = CompletionRounds(llm, QUESTION, TASKS["multihop"], revise=revise)
    trace = Trace(question=QUESTION, method="searchain", rounds=2)
    path = [Node("r2.1", "Who directed Jaws?", "George Lucas", "llm", "q")]
    passage = Passage(id="p1", text="Jaws is a 1975 film directed by Steven Spielberg.")
    fb = FeedbackText("verify", path[0].query, "Steven Spielberg", passage.render())
    return rounds, trace, path, fb


def _first_prompt() -> str:
    return prompts.fill(TASKS["multihop"], question=QUESTION)


def test_earlier_rounds_are_dropped_when_the_grown_prompt_does_not_fit() -> None:
    generated = "[Query 1]: Who directed Jaws?\n[Answer 1]: George Lucas\n"
    window = 256 * math.ceil((len(LocalLLM().tokenize(_first_prompt())) + 512) / 256)
    llm = _llm_with_context(window)
    rounds, trace, path, fb = _rounds(llm)
    # Two earlier rounds' worth of text make the grown prompt too long; without them it fits.
    rounds.prompt = rounds.chain_prompt + ("[Query 1]: filler question\n" * 80)
    assert prompt_fits(llm, rounds.prompt, 256) is False
    assert rounds.advance(trace, path, generated, fb, 256)
    prompt = rounds.prompt
    assert prompt.startswith(rounds.chain_prompt)
    assert "filler question" not in prompt  # the earlier rounds are gone
    assert "Steven Spielberg" in prompt and prompt.endswith("[Query 2]:")  # the feedback stays
    assert prompt_fits(llm, prompt, 256) is True and rounds.cue == "[Query 2]:"
    assert trace.meta["compacted_rounds"] == [3] and not trace.errors
    # A prompt that fits is left as the paper builds it: every earlier round kept.
    rounds.prompt = rounds.chain_prompt + "[Query 1]: filler question\n"
    assert rounds.advance(trace, path, generated, fb, 256)
    assert "filler question" in rounds.prompt


def test_after_feedback_the_paper_cues_the_models_new_answer() -> None:
    """The paper's default: the restated chain ends with the node's query and "[Answer n]:",
    so the model writes its new answer a'; the reader's g is only in the feedback message."""
    llm = LocalLLM()
    rounds, trace, path, fb = _rounds(llm, revise=True)
    earlier = Node("r1.1", "Who played Martin Brody?", "Roy Scheider", "ir-corrected", "q",
                   meta={"revised_answer": "Roy Scheider played Martin Brody."})  # fmt: skip
    path = [earlier, *path]
    assert rounds.advance(trace, path, "[Query 2]: Who directed Jaws?\n", fb, 256)
    cue = "[Query 2]: Who directed Jaws?\n[Answer 2]:"
    assert rounds.prompt.endswith(cue) and (rounds.cue, rounds.offset) == (cue, 1)
    restated = rounds.prompt[rounds.prompt.rindex("[Question]:") :]
    # An earlier node the model re-answered is restated with its own new answer.
    assert "[Answer 1]: Roy Scheider played Martin Brody.\n" in restated
    assert "Steven Spielberg" not in restated and "Steven Spielberg" in rounds.prompt
    # The old form, for comparison: g restated, the model goes on with the next query.
    old, trace, _, fb = _rounds(llm)
    assert old.advance(trace, path, "", fb, 256)
    assert old.prompt.endswith("[Answer 2]: George Lucas\n[Query 3]:")
    assert (old.cue, old.offset) == ("[Query 3]:", 2)


def test_when_nothing_fits_the_rounds_stop_with_a_recorded_reason() -> None:
    llm = _llm_with_context(256 * math.ceil(len(LocalLLM().tokenize(_first_prompt())) / 256))
    rounds, trace, path, fb = _rounds(llm)
    assert rounds.advance(trace, path, "", fb, 256) is False
    assert trace.meta["stopped"] == "context window"
    assert "round 3 not run" in trace.errors[0]


@pytest.mark.slow
def test_real_run_stops_rounds_at_the_context_and_still_answers_with_citations(
    index: BM25Index, hotpot: list[dict], tmp_path: Path
) -> None:
    """hotpot[0] gets a correction in round 1 (recorded real outputs, see test_searchain).
    With a context that holds round 1 but not round 2, the question is answered from the
    corrected path instead of failing."""
    store_path = tmp_path / "searchain.jsonl"
    shutil.copy(DIR / "searchain.jsonl", store_path)  # replay round 1; never write the recording
    question = hotpot[0]["question_text"]
    first = prompts.fill(TASKS["multihop"], question=question)
    window = 256 * math.ceil((len(LocalLLM().tokenize(first)) + 256) / 256)
    llm = CachedLLM(_llm_with_context(window), JsonlStore(store_path))
    assert llm.identity == DEFAULT_MODEL_NAME
    # the chain (its rounds are what the context stops); the default reads first
    method = SearChain(
        llm, index, LLMReader(llm), SearChainConfig(route="chain"), make_embedder("embedding")
    )
    trace = method.run(question)
    assert trace.meta["feedback"], "round 1 should be corrected, as recorded"
    assert trace.rounds == 1 and trace.meta["stopped"] == "context window"
    assert any("round 2 not run" in e for e in trace.errors)
    corrected = trace.meta["feedback"][0]["node"]
    assert trace.meta["path"][-1] == corrected
    assert trace.final_content and trace.references  # traced from the verified path
