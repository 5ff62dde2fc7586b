"""A method is one component class: register a toy one with one setting and it is on every
surface — a CLI flag and -O, the HTTP allow-list of /v1/ask, the chat completions' models, the
MCP ask tool, an evaluation's manifest, the Python API — with no other change (issues 38, 48,
63; ``test_method_component.py`` installs one as a plugin)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

import searchain
from searchain.cli import build_app  # imported before the toy is registered
from searchain.methods.catalog import MethodComponent, register, unregister
from searchain.methods.settings import check_settings, setting
from searchain.types import Node, Trace
from serverkit import mcp_ask


@dataclass
class ToyConfig:
    level: int = setting(
        2, "How many times the toy repeats the question.", ge=1, le=5, flag="toy-level"
    )

    def __post_init__(self) -> None:
        check_settings(self)


class Toy:
    """Answers with its setting's value, so every surface can see the value arrive."""

    name = "toy"

    def __init__(self, llm: Any, config: ToyConfig) -> None:
        self.llm, self.config = llm, config

    def run(self, question: str) -> Trace:
        answer = f"level {self.config.level}"
        trace = Trace(question=question, method=self.name, answer=answer, final_content=answer)
        trace.nodes = [Node(id="1", query=question, answer=answer, source="llm")]
        return trace


class ToyComponent(MethodComponent):
    name = "toy"
    summary = "a toy that says its level"
    config = ToyConfig
    # "toy-loud" is a preset: a name that fixes a setting (as "searchain-paper" fixes the
    # paper's).
    variants: ClassVar[dict[str, dict[str, Any]]] = {"toy-loud": {"level": 5}}

    @classmethod
    def build(cls, llm: Any, retriever: Any, options: dict[str, Any]) -> Toy:
        return Toy(llm, ToyConfig(**options))


Component = type[MethodComponent]


@pytest.fixture
def toy() -> Iterator[Component]:
    register(ToyComponent)
    try:
        yield ToyComponent
    finally:
        unregister("toy")


def test_a_name_taken_twice_is_refused(toy: Component) -> None:
    class Impostor(ToyComponent):
        name = "toy2"
        aliases = ("searchain",)

    with pytest.raises(ValueError, match="already registered: searchain"):
        register(Impostor)
    with pytest.raises(TypeError, match="not a MethodComponent subclass that sets a name"):
        register(MethodComponent)


def test_the_cli_offers_its_setting_as_a_flag_and_with_O(toy: Component) -> None:
    app = build_app()  # the command line as the components declare it now
    runner = CliRunner()
    helped = runner.invoke(app, ["ask", "--help"], env={"COLUMNS": "200"})
    assert "--toy-level" in helped.output and "toy (a toy that says its level)" in helped.output
    flagged = runner.invoke(app, ["ask", "Why?", "--method", "toy", "--toy-level", "4", "--json"])
    assert flagged.exit_code == 0, flagged.output
    assert json.loads(flagged.stdout)["answer"] == "level 4"
    option = runner.invoke(app, ["ask", "Why?", "--method", "toy", "-O", "level=5", "--json"])
    assert json.loads(option.stdout)["answer"] == "level 5"
    wrong = runner.invoke(app, ["ask", "Why?", "--method", "toy", "-O", "level=9"])
    assert wrong.exit_code == 1 and "level must be at most 5" in wrong.output
    listed = runner.invoke(app, ["settings", "toy", "--json"])
    assert [s["name"] for s in json.loads(listed.stdout)["toy"]] == ["level"]


def _post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_http_service_allows_its_setting_per_request(toy: Component) -> None:
    from searchain.llm import make_llm
    from searchain.net.serving import running
    from searchain.retrieval.demo import default_index
    from searchain.server import Engine, Settings, create_app

    engine = Engine(
        make_llm("local", model="gemma-3-270m", cache=False), default_index(), max_concurrent=1
    )
    with running(create_app(engine, Settings()), lifespan="on") as url:  # MCP's sessions
        chat = {"model": "toy", "messages": [{"role": "user", "content": "Why?"}]}
        status, got = _post(f"{url}/v1/chat/completions", {**chat, "options": {"level": 4}})
        assert status == 200, got
        assert got["choices"][0]["message"]["content"].startswith("level 4")
        answered = mcp_ask(url, {"question": "Why?", "method": "toy", "options": {"level": 5}})
        assert not answered.is_error, answered.content
        assert (answered.structured_content or {})["answer"].startswith("level 5")
        body = {"question": "Why?", "method": "toy", "options": {"level": 3}}
        status, got = _post(f"{url}/v1/ask", body)
        assert status == 200, got
        assert got["answer"] == "level 3"
        assert got["confidence"]["calibrated"] is False  # every answer says how far to trust it
        body["options"] = {"level": 6}  # above its declared bound
        assert _post(f"{url}/v1/ask", body)[0] == 422
        with urllib.request.urlopen(f"{url}/v1/methods", timeout=60) as r:
            methods = json.loads(r.read())["methods"]
        assert {"toy", "toy-loud"} <= {m["name"] for m in methods}
        status, got = _post(f"{url}/v1/ask", {"question": "Why?", "method": "toy-loud"})
        assert (status, got["answer"], got["method"]) == (200, "level 5", "toy-loud")
        loud = {"question": "Why?", "method": "toy-loud", "options": {"level": 3}}
        status, got = _post(f"{url}/v1/ask", loud)  # a setting the preset fixes
        assert 400 <= status < 500 and "toy-loud fixes level=5" in json.dumps(got), got
        answered = mcp_ask(url, {"question": "Why?", "method": "toy-loud"})
        assert (answered.structured_content or {})["answer"].startswith("level 5")


def test_an_evaluation_records_its_setting_in_the_manifest(toy: Component, tmp_path: Path) -> None:
    data = tmp_path / "two.jsonl"
    rows = [
        {"id": "a", "question": "Why?", "answers": ["level 3"]},
        {"id": "b", "question": "How?", "answers": ["no"]},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    summary = searchain.evaluate(
        str(data), out, methods=["toy"], options={"toy": {"level": 3}}, concurrency=1
    )
    assert (summary["done"], summary["failed"]) == (2, 0)
    config = json.loads((out / "manifest.json").read_text())["config"]
    assert config["method_config"]["toy"] == {"name": "toy", "class": "Toy", "level": 3}
    assert "Toy" in searchain.report(out) or "toy" in searchain.report(out)


def test_the_python_api_takes_its_setting_as_a_keyword(toy: Component) -> None:
    assert searchain.ask("Why?", method="toy", level=4).answer == "level 4"
    with pytest.raises(ValueError, match="toy has no setting loudness"):
        searchain.ask("Why?", method="toy", loudness=1)
    assert [s.name for s in searchain.settings("toy")] == ["level"]


def test_a_preset_keeps_its_name_beside_its_method(toy: Component, tmp_path: Path) -> None:
    """A run of the method and its preset records both, each trace by the name it was asked
    by; the Python API and the CLI answer by the preset's name and refuse to drop a setting
    it fixes."""
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"id": "a", "question": "Why?", "answers": ["level 5"]}) + "\n")
    out = tmp_path / "run"
    summary = searchain.evaluate(str(data), out, methods=["toy", "toy-loud"], concurrency=1)
    assert (summary["done"], summary["failed"]) == (2, 0)
    records = [json.loads(ln) for ln in (out / "results.jsonl").read_text().splitlines()]
    got = {r["method"]: (r["trace"]["method"], r["trace"]["answer"]) for r in records}
    assert got == {"toy": ("toy", "level 2"), "toy-loud": ("toy-loud", "level 5")}
    config = json.loads((out / "manifest.json").read_text())["config"]["method_config"]
    assert (config["toy"]["name"], config["toy-loud"]["name"]) == ("toy", "toy-loud")
    assert searchain.ask("Why?", method="toy-loud").method == "toy-loud"
    with pytest.raises(ValueError, match="toy-loud fixes level=5 \\(given 4\\); use toy"):
        searchain.ask("Why?", method="toy-loud", level=4)
    asked = CliRunner().invoke(build_app(), ["ask", "Why?", "--method", "toy-loud", "--json"])
    assert json.loads(asked.stdout)["answer"] == "level 5", asked.output
