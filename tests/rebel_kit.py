"""REBEL's recorded scenario (Gemma 3 270M's real outputs, ``tests/data/recordings/rebel.jsonl``)
with the fact-search tool over HTTP: run by the REBEL tests and by the viewer's."""

from __future__ import annotations

import urllib.parse

from recordings import recorded_llm
from searchain.llm import LLM, GenerationParams
from searchain.methods.rebel import Rebel, RebelConfig
from searchain.net.safe_http import HttpPolicy
from searchain.tools import HttpTool
from searchain.types import CompletionResult, Trace
from tool_server import FactServer

KEY = "sk-rebel+Secret/key=="
NOBEL = "Who won the Nobel Prize in Literature in the year Marvin Gaye was born?"
DESCRIPTION = (
    "Fact search: finds short facts about people and countries (birthplace, birth date, "
    "currency, latitude, prizes)."
)

# The recordings were made with the earlier split prompt, which teaches [] for a question one
# tool use answers; the paper's (the default) returns the question itself (issue 29 R2).
RECORDED_SPLIT = "empty"


def facts_tool(server: FactServer, path: str = "/search", **schema) -> HttpTool:
    q = {"type": "string", "description": "what to search for", **schema}
    return HttpTool(
        "facts",
        DESCRIPTION,
        {
            "type": "object",
            "properties": {"q": q},
            "required": ["q"],
            "additionalProperties": False,
        },
        url=server.url + path,
        static_params={"api_key": KEY},
        policy=HttpPolicy(allow_private=(f"127.0.0.1:{server.port}",)),
    )


def run(server, embedder, question=NOBEL, llm=None, tool=None, tools=None, **cfg) -> Trace:
    # recorded with the earlier split prompt (a one-tool question gets []): see RECORDED_SPLIT
    config = RebelConfig(**{"max_depth": 2, "max_llm_calls": 20, "max_tool_calls": 6,
                            "split_prompt": RECORDED_SPLIT, **cfg})  # fmt: skip
    method = Rebel(llm or recorded_llm("rebel"), tools or [tool or facts_tool(server)], config,
                   embedder=embedder)  # fmt: skip
    return method.run(question)


# the key as it may appear in a URL or a log: raw, quoted, quoted with plus
KEY_FORMS = (KEY, urllib.parse.quote(KEY, safe=""), urllib.parse.quote_plus(KEY))


class Observed(LLM):
    """Passes calls through to a real (or replayed) model and keeps the prompts it was sent."""

    backend = "observed"

    def __init__(self, inner: LLM) -> None:
        super().__init__(inner.model)
        self.inner, self.prompts = inner, []

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        self.prompts.append(prompt)
        return self.inner.complete(prompt, params)


def nodes(trace: Trace) -> dict:
    return {n.id: n for n in trace.nodes}
