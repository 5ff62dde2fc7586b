"""`--max-risk R` on every surface (issue 49): the CLI and the server, with and without a
check, apply the threshold certified for the calibrator that mapped the answer — checked
against the certification formula on the calibrator's own fixed items — or withhold with a
null threshold and the reason, in strict JSON; the chat and MCP faces carry the threshold,
its terms and the calibrator's provenance. The calibrators are the user's own, fit by
`searchain calibrate` on runs whose configuration is the one `ask` really makes (one real
answer of the embedded test model gives it)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from typer.testing import CliRunner

from searchain.cli import app
from searchain.llm import make_llm
from searchain.methods.assembly import Spec
from searchain.net.serving import running
from searchain.retrieval.factory import open_retriever
from searchain.scoring.confidence.calibrator import Calibrator, forget_calibrators
from searchain.server import Engine, Settings, create_app
from serverkit import mcp_ask

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

pytestmark = pytest.mark.slow
QUESTION = "Who portrayed Corliss Archer in Kiss and Tell?"
BASE, VARIANT = "retrieve-read--gemma-3-270m", "retrieve-read+likelihood--gemma-3-270m"


def _strict(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _run(path: Path, template: dict[str, Any], with_check: bool) -> Path:
    """60 labelled answers made with ``template``'s configuration: an answer found in the
    passages is mostly right, one not found mostly wrong (and, with the check, the model's
    log-probability mostly says which)."""
    path.mkdir(parents=True)
    manifest = {"config": {"dataset": "mine.jsonl", "model": "gemma-3-270m"}}
    (path / "manifest.json").write_text(json.dumps(manifest))
    found = " ".join(template["references"][0]["text"].split()[:3])
    lines = []
    for i in range(60):
        in_passages = i % 4 != 0
        right = (in_passages and i % 5 != 0) or (not in_passages and i % 7 == 0)
        trace = copy.deepcopy(template)
        trace["answer"] = trace["final_content"] = found if in_passages else "Zyxwv Quorth"
        trace["confidence"] = None
        checks = {"likelihood": {"answer_logprob": -0.2 if right != (i % 6 == 0) else -3.0}}
        trace["meta"] = {k: v for k, v in trace["meta"].items() if k != "confidence_checks"}
        if with_check:
            trace["meta"]["confidence_checks"] = checks
        record = {"id": f"q{i}", "method": "retrieve-read", "status": "ok", "trace": trace}
        lines.append({**record, "metrics": {"cover_em": float(right)}})
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


@pytest.fixture(scope="module")
def calibrators(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    cache = tmp_path_factory.mktemp("cache")
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SEARCHAIN_CACHE_DIR", str(cache))
        forget_calibrators()
        args = ["ask", QUESTION, "--method", "retrieve-read", "--json"]
        got = runner.invoke(app, [*args, "--confidence-check", "likelihood"])
        assert got.exit_code == 0, got.output
        template = _strict(got.stdout)
        assert template["meta"]["corpus"] == "bm25:demo+parts+bridge"  # the default retriever
        for with_check in (False, True):
            run = _run(cache / f"run-{with_check}", template, with_check)
            fitted = runner.invoke(app, ["calibrate", str(run), "--method", "retrieve-read"])
            assert fitted.exit_code == 0, fitted.output
        forget_calibrators()  # the first answer found none: forget it
        found = {}
        for name in (BASE, VARIANT):
            cal = json.loads((cache / "calibrators" / f"calibrator-{name}.json").read_text())
            assert cal["probability"] and cal["certification"]["lowest_certified_risk"] < 0.6
            found[name] = cal
        yield found
        forget_calibrators()


def _expected(cal: dict[str, Any], risk: float, delta: float = 0.1) -> float | None:
    return Calibrator.from_dict(cal).certificate(risk, delta).threshold


def _risk(cal: dict[str, Any]) -> float:
    """A risk the calibrator certifies a threshold at (its lowest, with room)."""
    return min(0.9, round(cal["certification"]["lowest_certified_risk"] + 0.05, 2))


def _ask(*extra: str) -> dict[str, Any]:
    got = CliRunner().invoke(app, ["ask", QUESTION, "--method", "retrieve-read", "--json", *extra])
    assert got.exit_code == 0, got.output
    return _strict(got.stdout)["confidence"]


def test_the_cli_applies_the_threshold_certified_for_the_answers_calibrator(
    calibrators: dict[str, Any],
) -> None:
    base, variant = calibrators[BASE], calibrators[VARIANT]
    r = _risk(base)
    conf = _ask("--max-risk", str(r))
    assert conf["calibrated"] and conf["calibrator"]["name"] == BASE
    assert conf["threshold"] == _expected(base, r) is not None
    assert conf["abstained"] == (conf["value"] < conf["threshold"]) and "at most" in conf["terms"]
    conf = _ask("--max-risk", str(r), "--risk-delta", "0.3")
    assert conf["threshold"] == _expected(base, r, 0.3)
    r = _risk(variant)
    conf = _ask("--max-risk", str(r), "--confidence-check", "likelihood")
    assert conf["calibrator"]["name"] == VARIANT and conf["threshold"] == _expected(variant, r)


def test_the_cli_withholds_with_a_null_threshold_and_says_why_first(
    calibrators: dict[str, Any],
) -> None:
    conf = _ask("--max-risk", "0.01")
    assert conf["threshold"] is None and conf["abstained"]
    assert "no threshold is certified at risk 0.01" in conf["terms"]
    shown = CliRunner().invoke(
        app,
        ["ask", QUESTION, "--method", "retrieve-read", "--max-risk", "0.01"],
        env={"COLUMNS": "200"},
    )
    assert shown.exit_code == 0, shown.output
    out = shown.output
    assert "Not answered:" in out and out.index("Not answered:") < out.index("Answer:")


SERVER_DELTA = 0.3


@pytest.fixture(scope="module")
def url(calibrators: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    llm = make_llm("local", cache=tmp_path_factory.mktemp("llm") / "calls.sqlite")
    with pytest.MonkeyPatch.context() as mp:  # the server reads the user's calibrators
        mp.setenv("SEARCHAIN_CACHE_DIR", str(Path(calibrators[BASE]["fit_on"]["runs"][0]).parent))
        forget_calibrators()
        r = _risk(calibrators[BASE])
        # the operator's δ (serve --risk-delta) holds for every request's risk bound
        # the default retriever, as `searchain serve` opens it (the calibrators' configuration)
        searched = open_retriever()
        spec = Spec(max_risk=r, risk_delta=SERVER_DELTA)
        engine = Engine(llm, searched, spec=spec, max_concurrent=1)
        app_ = create_app(engine, Settings(runs_dir=tmp_path_factory.mktemp("runs")))
        with running(app_, lifespan="on") as u:
            yield u
        forget_calibrators()


def test_the_server_applies_each_configurations_threshold(
    url: str, calibrators: dict[str, Any]
) -> None:
    base, variant = calibrators[BASE], calibrators[VARIANT]
    payload = {"question": QUESTION, "method": "retrieve-read"}
    conf = httpx.post(f"{url}/v1/ask", json=payload, timeout=300).json()["confidence"]
    assert conf["threshold"] == _expected(base, _risk(base), SERVER_DELTA) and conf["terms"]
    r = _risk(variant)
    checked = {**payload, "max_risk": r, "confidence_checks": ["likelihood"]}
    res = httpx.post(f"{url}/v1/ask", json=checked, timeout=300)
    assert res.status_code == 200, res.text
    _strict(res.text)
    conf = res.json()["confidence"]
    assert conf["calibrator"]["name"] == VARIANT
    assert conf["threshold"] == _expected(variant, r, SERVER_DELTA)
    low = httpx.post(f"{url}/v1/ask", json={**payload, "max_risk": 0.01}, timeout=300)
    assert low.json()["confidence"]["threshold"] is None and _strict(low.text)


def test_the_chat_and_mcp_faces_carry_threshold_terms_and_provenance(
    url: str, calibrators: dict[str, Any]
) -> None:
    expected = _expected(calibrators[BASE], _risk(calibrators[BASE]), SERVER_DELTA)
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=300)
    r = client.chat.completions.create(
        model="retrieve-read", messages=[{"role": "user", "content": QUESTION}]
    )
    conf = (r.model_extra or {})["searchain"]["confidence"]
    assert conf["threshold"] == expected and conf["calibrator"]["name"] == BASE
    assert "Threshold: " in (r.choices[0].message.content or "") and conf["terms"]

    result = mcp_ask(url, {"question": QUESTION, "method": "retrieve-read"})
    assert not result.is_error, result
    conf = result.structured_content["confidence"]
    assert conf["threshold"] == expected and conf["calibrator"]["name"] == BASE
    assert conf["terms"]
