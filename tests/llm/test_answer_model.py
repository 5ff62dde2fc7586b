"""Which offline model answers a person: the 1.5B instruct model unless told otherwise."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from searchain.cli import app
from searchain.llm.models import ANSWER_MODEL, MODEL_ENV, answer_model


def test_default_env_and_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MODEL_ENV, raising=False)
    assert answer_model(None) == ANSWER_MODEL == "qwen2.5-coder-1.5b"
    monkeypatch.setenv(MODEL_ENV, "qwen2.5-coder-0.5b")
    assert answer_model(None) == "qwen2.5-coder-0.5b"
    assert answer_model("gemma-3-270m") == "gemma-3-270m"  # --model wins


def test_ask_help_names_the_default_and_how_to_change_it() -> None:
    out = CliRunner().invoke(app, ["ask", "--help"], env={"COLUMNS": "200"}).output
    assert ANSWER_MODEL in out and f"${MODEL_ENV}" in out and "gemma-3-270m" in out


def test_ask_uses_the_model_the_environment_names(tmp_path, monkeypatch) -> None:
    """The suite names Gemma through $SEARCHAIN_MODEL (conftest). Gemma is a base model
    (completion form), the 1.5B an instruct model (chat form): the trace tells them apart."""
    import json

    monkeypatch.setenv(MODEL_ENV, "gemma-3-270m")
    res = CliRunner().invoke(
        app, ["ask", "Who directed Big Stone Gap?", "--method", "direct-prompting", "--json"],
        env={"SEARCHAIN_CACHE_DIR": str(tmp_path)},
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    trace = json.loads(res.stdout)
    assert trace["meta"]["prompt_form"] == "completion"
