"""`searchain serve`'s operator options: what a client may not send (paths, URLs, models)
the operator sets at start, and the Host allow-list follows --host and --allowed-host."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import typer

from searchain.cli.method_flags import MethodChoice, OperatorFlags
from searchain.cli.model_options import AbstentionOptions, ModelOptions, RuntimeOptions
from searchain.cli.option_groups import spec_of
from searchain.cli.serve import allowed_hosts, open_engine, operator_options
from searchain.methods.assembly import Spec
from servers import free_port

try:
    import httpx2 as httpx
except ImportError:  # the name of the package varies with the starlette version
    import httpx  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[2]


def test_operator_options_route_each_flag_to_its_method(tmp_path: Path) -> None:
    tools = str(tmp_path / "tools.yaml")
    flags = {"tools": tools, "nli": "none", "reward_reference": "openai:m@http://127.0.0.1:9/v1",
             "reader": "llm"}  # fmt: skip
    opts = operator_options(OperatorFlags(flags), ["searchain.theta=-1.0", "rebel.max_depth=2"])
    assert opts["rebel"] == {"tools": tools, "max_depth": 2}
    assert opts["thinkcite"] == {"nli": "none",
                                 "reward_reference": "openai:m@http://127.0.0.1:9/v1"}  # fmt: skip
    assert opts["searchain"] == {"reader": "llm", "theta": -1.0}
    assert operator_options(OperatorFlags(), None) == {}


def test_a_plain_key_would_reach_every_method_and_is_refused() -> None:
    with pytest.raises(typer.BadParameter, match=r"METHOD\.KEY=VALUE"):
        operator_options(OperatorFlags(), ["theta=-1.0"])


def test_allowed_hosts() -> None:
    assert allowed_hosts("127.0.0.1", None) == ("127.0.0.1", "localhost", "::1")
    assert allowed_hosts("0.0.0.0", ["api.example.org"])[-1] == "api.example.org"  # type: ignore[index]
    assert "box.lan" in allowed_hosts("box.lan", None)  # type: ignore[operator]
    assert allowed_hosts("0.0.0.0", ["*"]) is None


def test_a_served_runner_names_the_model_it_serves() -> None:
    """`searchain serve --model gemma-3-270m`: the engine takes the command's spec whole, so
    every runner it builds names the model served (not the default one), the retriever and
    the operator's abstention, with the request's method."""
    spec = spec_of(
        ModelOptions(model="gemma-3-270m"),
        RuntimeOptions(cache=False),
        MethodChoice("retrieve-read"),
        AbstentionOptions(abstain_below=0.2),
    )
    engine = open_engine(spec, 1, {})
    assert spec.model == "local:gemma-3-270m" and Spec().model is None
    for method in ("retrieve-read", "direct-prompting"):
        served = engine.runner(method).spec
        assert served.method == method and served.model == spec.model
        assert (served.retriever, served.index) == (spec.retriever, spec.index)
        assert (served.abstain_below, served.risk_delta) == (0.2, spec.risk_delta)
    assert "gemma" in engine.describe()["llm"]


@pytest.mark.slow
def test_serve_answers_only_allowed_hosts_and_refuses_a_bad_tools_file(tmp_path: Path) -> None:
    """The real command: a missing --tools file stops it at start with a clear error; with
    --allowed-host it answers that name and loopback, and refuses any other Host."""
    exe = str(ROOT / ".venv" / "bin" / "searchain")
    cmd = [exe, "serve", "--tools", str(tmp_path / "none.yaml"), "--port", str(free_port())]
    bad = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "none.yaml" in bad.stderr
    port = free_port()
    proc = subprocess.Popen([exe, "serve", "--port", str(port), "--allowed-host", "api.test",
                             "--runs-dir", str(tmp_path)], stderr=subprocess.PIPE)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/healthz"
        deadline = time.monotonic() + 300
        while True:
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.5)
        assert httpx.get(url).status_code == 200
        assert httpx.get(url, headers={"Host": "api.test"}).status_code == 200
        evil = httpx.get(url, headers={"Host": "rebind.attacker.example"})
        assert evil.status_code == 400
    finally:
        proc.terminate()
        proc.wait(timeout=30)
