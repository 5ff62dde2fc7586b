"""One spec, one assembler (issue 38): the model as one string, every older option form
mapped onto it, and the spec's round trip."""

from __future__ import annotations

import pytest

from searchain.llm import LLMError
from searchain.methods.assembly import ModelRef, Spec, assemble, model_string


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("local:qwen2.5-coder-0.5b", ModelRef("local", "qwen2.5-coder-0.5b")),
        ("qwen2.5-coder-0.5b", ModelRef("local", "qwen2.5-coder-0.5b")),
        ("local:/models/x.gguf", ModelRef("local", None, "/models/x.gguf")),
        ("models/x.gguf", ModelRef("local", None, "models/x.gguf")),
        ("openai:gpt-4o-mini", ModelRef("openai", "gpt-4o-mini")),
        (
            "openai:llama3:8b@http://127.0.0.1:11434/v1",
            ModelRef("openai", "llama3:8b", None, "http://127.0.0.1:11434/v1"),
        ),
    ],
)
def test_a_model_is_one_string(text: str, ref: ModelRef) -> None:
    assert ModelRef.parse(text) == ref
    assert ModelRef.parse(str(ref)) == ref  # the string form reads back the same


def test_no_model_is_the_one_default_of_every_surface(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEARCHAIN_MODEL", raising=False)
    assert ModelRef.parse(None) == ModelRef("local", "qwen2.5-coder-1.5b")
    monkeypatch.setenv("SEARCHAIN_MODEL", "gemma-3-270m")
    assert ModelRef.parse(None) == ModelRef("local", "gemma-3-270m")


def test_the_older_options_map_onto_the_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEARCHAIN_OPENAI_MODEL", raising=False)
    assert model_string() is None
    assert model_string("local", "gemma-3-270m") == "local:gemma-3-270m"
    assert model_string("local", model_path="x.bin") == "local:./x.bin"
    assert model_string("openai", "m", "http://h/v1") == "openai:m@http://h/v1"
    assert model_string("local", "openai:m@http://h/v1") == "openai:m@http://h/v1"
    with pytest.raises(LLMError, match="needs a model name"):
        ModelRef.parse(model_string("openai"))
    with pytest.raises(ValueError, match="unknown LLM backend"):
        model_string("vllm")


def test_a_spec_round_trips_and_refuses_an_unknown_field() -> None:
    spec = Spec(method="rebel", model="openai:m@http://h/v1", options={"max_depth": 2})
    assert Spec.from_dict(spec.to_dict()) == spec
    with pytest.raises(ValueError, match="no field colour"):
        Spec.from_dict({"colour": "red"})
    assert not Spec(method="searchain-no-ir").needs_retriever()
    assert not Spec(options={"use_ir": False}).needs_retriever()


def test_options_are_checked_before_any_model_is_opened() -> None:
    # A model that does not exist: the bad option is refused first, so this never loads it.
    spec = Spec(method="searchain", model="local:/nowhere/model.gguf", options={"r_max": 0})
    with pytest.raises(ValueError, match="r_max must be at least 1"):
        assemble(spec)
