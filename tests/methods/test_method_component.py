"""A method is one component class in one file, found where it lives: the built-in ones in the
modules of ``searchain.methods``, a third party's through the ``searchain.methods`` entry-point
group. A toy method written as one new file, installed as a plugin (a module and its
``.dist-info`` on the path, as pip leaves them), reaches ``searchain ask``, ``searchain eval``,
``/v1/ask``, chat completions (the openai SDK), MCP (the mcp SDK) and the Python API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

import searchain
from searchain.methods import catalog
from serverkit import mcp_ask

# The one new file: the method, its settings and its component.
PARROT = '''"""A method from outside searchain: it says how many times it was asked to."""

from dataclasses import dataclass
from typing import Any

from searchain.methods.component import MethodComponent
from searchain.methods.settings import check_settings, setting
from searchain.types import Node, Trace


@dataclass
class ParrotConfig:
    times: int = setting(1, "How many times it says it.", ge=1, le=3, flag="parrot-times")

    def __post_init__(self) -> None:
        check_settings(self)


class Parrot:
    name = "parrot"

    def __init__(self, config: ParrotConfig) -> None:
        self.config = config

    def run(self, question: str) -> Trace:
        answer = f"said {self.config.times} times"
        trace = Trace(question=question, method=self.name, answer=answer, final_content=answer)
        trace.nodes = [Node(id="1", query=question, answer=answer, source="llm")]
        return trace


class ParrotComponent(MethodComponent):
    name = "parrot"
    summary = "says how many times it was asked to"
    config = ParrotConfig

    @classmethod
    def build(cls, llm: Any, retriever: Any, options: dict[str, Any]) -> Parrot:
        return Parrot(ParrotConfig(**options))
'''

BUILTIN = (
    "searchain",
    "retrieve-read",
    "rebel",
    "thinkcite",
    "direct-prompting",
    "cot",
    "self-ask",
    "self-ask-no-search",
    "react",
    "searchain-no-ir",
    "searchain-no-verification",
    "searchain-no-completion",
    "searchain-paper",
    "direct-retrieval",
)


def install(where: Path, module: str, source: str, entry: str) -> Path:
    """``source`` as module ``module`` and a distribution naming ``entry`` in the
    ``searchain.methods`` group, under ``where`` (what ``pip install`` of a plugin leaves)."""
    (where / f"{module}.py").write_text(source)
    info = where / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{catalog.ENTRY_POINTS}]\n{entry}\n")
    return where


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("site")
    return install(where, "searchain_parrot", PARROT, "parrot = searchain_parrot:ParrotComponent")


@pytest.fixture
def installed(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The plugin on this process's path, and the methods found anew."""
    monkeypatch.syspath_prepend(str(plugin_dir))
    catalog.discover()
    try:
        yield plugin_dir
    finally:
        monkeypatch.undo()
        sys.modules.pop("searchain_parrot", None)
        catalog.discover()


def searchain_cli(args: list[str], plugin_dir: Path) -> subprocess.CompletedProcess[str]:
    """``searchain ARGS`` in a fresh process whose path holds the plugin."""
    path = os.pathsep.join(p for p in (str(plugin_dir), os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [str(Path(sys.executable).parent / "searchain"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path, "COLUMNS": "200"},
        timeout=300,
    )


def test_the_builtin_methods_are_found_in_their_modules() -> None:
    assert catalog.discover() and catalog.method_names() == BUILTIN
    homes = {c.name: c.__module__ for c in catalog.components()}
    assert homes["searchain"] == "searchain.methods.searchain.component"
    assert homes["react"] == "searchain.methods.react"
    assert catalog.baselines() == (
        "direct-prompting",
        "cot",
        "self-ask",
        "self-ask-no-search",
        "react",
    )


def test_a_plugin_reaches_the_cli_ask_and_eval(plugin_dir: Path, tmp_path: Path) -> None:
    helped = searchain_cli(["ask", "--help"], plugin_dir)
    assert "--parrot-times" in helped.stdout, helped.stderr
    assert "parrot (says how many times it was asked to)" in helped.stdout
    asked = searchain_cli(
        ["ask", "Why?", "--method", "parrot", "--parrot-times", "2", "--json"], plugin_dir
    )
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["answer"] == "said 2 times"
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"id": "a", "question": "Why?", "answers": ["said 3 times"]}) + "\n")
    out = tmp_path / "run"
    args = [
        "eval",
        "--dataset",
        str(data),
        "--out",
        str(out),
        "--methods",
        "parrot",
        "-O",
        "times=3",
    ]
    evaluated = searchain_cli([*args, "--concurrency", "1"], plugin_dir)
    assert evaluated.returncode == 0, evaluated.stderr
    config = json.loads((out / "manifest.json").read_text())["config"]
    assert config["method_config"]["parrot"] == {"name": "parrot", "class": "Parrot", "times": 3}
    record = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert record["trace"]["answer"] == "said 3 times"


def test_a_plugin_reaches_the_service_and_the_python_api(installed: Path) -> None:
    from searchain.llm import make_llm
    from searchain.net.serving import running
    from searchain.retrieval.demo import default_index
    from searchain.server import Engine, Settings, create_app

    assert searchain.ask("Why?", method="parrot", times=2).answer == "said 2 times"
    assert [s.name for s in searchain.settings("parrot")] == ["times"]
    engine = Engine(
        make_llm("local", model="gemma-3-270m", cache=False), default_index(), max_concurrent=1
    )
    with running(create_app(engine, Settings()), lifespan="on") as url:  # MCP's sessions
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="-", max_retries=0, timeout=60)
        assert "parrot" in [m.id for m in client.models.list()]
        chat = client.chat.completions.create(
            model="parrot",
            messages=[{"role": "user", "content": "Why?"}],
            extra_body={"options": {"times": 3}},
        )
        assert (chat.choices[0].message.content or "").startswith("said 3 times")
        answered = mcp_ask(url, {"question": "Why?", "method": "parrot", "options": {"times": 2}})
        assert (answered.structured_content or {})["answer"].startswith("said 2 times")
        body = json.dumps({"question": "Why?", "method": "parrot", "options": {"times": 1}})
        req = urllib.request.Request(
            f"{url}/v1/ask", body.encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            assert json.loads(r.read())["answer"] == "said 1 times"


def test_an_entry_point_that_names_no_component_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        tmp_path, "searchain_stray", "def stray() -> None: ...\n", "stray = searchain_stray:stray"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(TypeError, match=r"stray = 'searchain_stray:stray'.*not a Method"):
            catalog.discover()
    finally:
        monkeypatch.undo()
        sys.modules.pop("searchain_stray", None)
        catalog.discover()
    assert catalog.method_names() == BUILTIN
