"""Abstention on the service: the operator's threshold (`searchain serve --abstain-below`)
reaches every face — /v1/ask, the chat face, MCP — and a /v1/ask request may set its own. A
withheld answer says so in words before the guess, and the guess is kept. Real embedded model,
demo index, driven by the official OpenAI and MCP clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from typer.testing import CliRunner

from searchain.cli import app as cli_app
from searchain.llm import make_llm
from searchain.methods.assembly import Spec
from searchain.net.serving import running
from searchain.retrieval.demo import default_index
from searchain.server import Engine, Settings, create_app
from serverkit import mcp_ask

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

# Nothing in the demo corpus says it: the answer is in no passage, so the confidence is < 1.
QUESTION = "Which mineral did the 1921 Antarctic expedition of Hollis Vantreeck bring back?"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    llm = make_llm(
        "local", model="gemma-3-270m", cache=tmp_path_factory.mktemp("llm") / "calls.sqlite"
    )
    spec = Spec(model="local:gemma-3-270m", abstain_below=1.0)  # `serve --abstain-below 1`
    engine = Engine(llm, default_index(), spec=spec, max_concurrent=1)
    app = create_app(engine, Settings(runs_dir=tmp_path_factory.mktemp("runs")))
    with running(app, lifespan="on") as u:  # the MCP face's session manager runs in it
        yield u


def ask(url: str, **fields: Any) -> httpx.Response:
    payload = {"question": QUESTION, "method": "retrieve-read", **fields}
    return httpx.post(f"{url}/v1/ask", json=payload, timeout=180)


def test_the_servers_threshold_withholds_and_keeps_the_guess(url: str) -> None:
    res = ask(url)
    assert res.status_code == 200, res.text
    body = res.json()
    conf = body["confidence"]
    assert conf["value"] < 1.0 and conf["threshold"] == 1.0 and conf["abstained"] is True
    assert body["answer"]  # the guess is kept, not blanked


def test_a_request_sets_its_own_threshold(url: str) -> None:
    conf = ask(url, abstain_below=0.0).json()["confidence"]
    assert conf["abstained"] is False and conf["threshold"] == 0.0


def test_bad_thresholds_are_refused_with_a_reason(url: str) -> None:
    both = ask(url, abstain_below=0.5, max_risk=0.3)
    assert both.status_code == 422 and "not both" in both.text
    assert ask(url, abstain_below=1.5).status_code == 422
    # Gemma 3 270M has no calibrator, so no risk bound can be certified for it.
    uncalibrated = ask(url, max_risk=0.3)
    assert uncalibrated.status_code == 422
    assert "needs a calibrated confidence" in uncalibrated.json()["error"]


def test_the_chat_face_says_the_answer_is_withheld_before_the_guess(url: str) -> None:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=300)
    r = client.chat.completions.create(
        model="retrieve-read", messages=[{"role": "user", "content": QUESTION}]
    )
    message = r.choices[0].message
    content = message.content or ""
    extra = (r.model_extra or {})["searchain"]
    assert content.startswith("Not answered: confidence") and extra["confidence"]["abstained"]
    assert f"Best unverified guess: {extra['answer']}" in content
    for a in message.annotations or []:  # the marks' offsets count the notice before them
        span = content[a.url_citation.start_index : a.url_citation.end_index]
        assert span.startswith("[") and span.endswith("]")


def test_the_mcp_answer_says_it_is_withheld(url: str) -> None:
    result = mcp_ask(url, {"question": QUESTION, "method": "retrieve-read"})
    assert not result.is_error, result
    out = result.structured_content
    assert out["answer"].startswith("Not answered:") and out["confidence"]["abstained"]
    assert out["short_answer"]  # the guess


def test_serve_refuses_a_risk_bound_it_cannot_keep(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli_app,
        ["serve", "--model", "gemma-3-270m", "--max-risk", "0.3", "--runs-dir", str(tmp_path)],
    )
    assert result.exit_code == 1
    assert "needs a calibrated confidence" in result.output
