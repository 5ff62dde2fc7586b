"""What a request may ask for, on every face of the service (``/v1/ask``, the chat
completions' ``options``, MCP's ``ask`` tool): the per-request options' allow-list, derived
from the method records' settings, and the ``/v1/ask`` request built on it (pydantic), so the
OpenAPI schema says exactly what the service accepts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    create_model,
    field_validator,
    model_validator,
)

from searchain.methods.catalog import canonical_methods, method_settings
from searchain.methods.settings import Setting, merged
from searchain.scoring.confidence.checks import CHECKS

CHECK_NAMES = tuple(CHECKS)


# Names a request may not use: what the engine is opened with (a model, an index, an
# endpoint), plus every method setting declared ``remote=False`` (files, models: the
# operator's, set when the service starts). Named so the refusal says where they belong;
# any other name outside the allow-list is refused too.
ENGINE_OPTIONS = frozenset(
    {
        "model",
        "model_path",
        "index",
        "dense_index",
        "retriever",
        "judge",
        "base_url",
        "api",
        "api_key",
        "embedder",
    }
)


def settings_by_name() -> dict[str, list[tuple[str, Setting]]]:
    """Each setting name with the methods that declare it, from the method records now."""
    return merged({m: method_settings(m) for m in canonical_methods()})


def server_side_options() -> frozenset[str]:
    """The engine's options and every setting some method declares ``remote=False``."""
    by_name = settings_by_name()
    local = {name for name, pairs in by_name.items() if not all(s.remote for _, s in pairs)}
    return ENGINE_OPTIONS | local


def _request_field(name: str, pairs: list[tuple[str, Setting]]) -> tuple[Any, Any]:
    """One allow-list field for a setting that one or more methods declare: the widest
    range any of them takes, capped by its remote bound (each method still checks its own
    range when it is built), and every declaration's help."""
    kinds = {s.type for _, s in pairs}
    if len(kinds) != 1:
        raise TypeError(f"setting {name!r} has more than one type: {kinds}")
    (kind,) = kinds
    desc = " ".join(f"{m}: {s.help} (default {s.default})" for m, s in pairs)
    if all(s.choices for _, s in pairs):
        values = tuple(dict.fromkeys(c for _, s in pairs for c in s.choices))
        return (Literal[values] | None, Field(None, description=desc))  # type: ignore[valid-type]
    if kind in (int, float):
        low = [s.ge if s.ge is not None else s.gt for _, s in pairs]
        high = [s.remote_le if s.remote_le is not None else s.le for _, s in pairs]
        if None in low or None in high:  # a client could ask for unbounded work
            raise TypeError(f"remote setting {name!r} needs a lower and an upper bound")
        lo, hi = min(low), max(high)  # type: ignore[type-var]
        strict = all(s.ge is None for _, s in pairs)  # every declaration says "more than"
        bound = {"gt": lo} if strict else {"ge": lo}
        return (kind | None, Field(None, le=hi, description=desc, **bound))
    if kind is bool:
        return (bool | None, Field(None, description=desc))
    raise TypeError(f"remote setting {name!r} is free text; give it choices or remote=False")


class _OptionsBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _server_side(cls, data: Any) -> Any:
        if isinstance(data, dict):
            server_side = server_side_options()
            for name in data:
                if name in server_side:
                    raise ValueError(
                        f"option {name!r} is set on the server when it starts, not per request"
                    )
        return data

    def given(self) -> dict[str, Any]:
        """The options the client set (``None`` means "the method's default")."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


def ask_options_model() -> type[_OptionsBase]:
    """Per-request method options: derived from the methods' settings (methods/settings.py),
    an allow-list of plain values (numbers, switches and enumerated strings), each bounded;
    nothing here can name a path, URL, model or endpoint. A method refuses (422) a name it
    does not take."""
    by_name, server_side = settings_by_name(), server_side_options()
    return create_model(  # type: ignore[call-overload,no-any-return]
        "AskOptions",
        __base__=_OptionsBase,
        __doc__="Per-request method options (see GET /v1/methods for each method's settings).",
        **{
            name: _request_field(name, pairs)
            for name, pairs in by_name.items()
            if name not in server_side
        },
    )


def __getattr__(name: str) -> Any:
    """``AskOptions`` and ``SERVER_SIDE_OPTIONS`` as the method records declare them now."""
    if name == "AskOptions":
        return ask_options_model()
    if name == "SERVER_SIDE_OPTIONS":
        return server_side_options()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class AskBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("question", check_fields=False)
    @classmethod
    def _not_blank(cls, q: str) -> str:
        if not q.strip():
            raise ValueError("question is empty")
        return q

    @model_validator(mode="after")
    def _one_threshold(self) -> AskBase:
        if (
            getattr(self, "abstain_below", None) is not None
            and getattr(self, "max_risk", None) is not None
        ):
            raise ValueError("give abstain_below or max_risk, not both")
        return self


def ask_model(methods: tuple[str, ...], default: str, max_chars: int) -> type[AskBase]:
    """The request model for this server: its methods, their options' allow-list and the
    question limit are in the schema."""
    options = ask_options_model()
    return create_model(  # type: ignore[call-overload,no-any-return]
        "AskRequest",
        __base__=AskBase,
        question=(str, Field(min_length=1, max_length=max_chars, description="The question.")),
        method=(Literal[methods], Field(default, description="See GET /v1/methods.")),  # type: ignore[valid-type]
        options=(options, Field(default_factory=options)),
        confidence_checks=(
            list[Literal[CHECK_NAMES]] | None,  # type: ignore[valid-type]
            Field(
                None,
                max_length=len(CHECK_NAMES),
                description="Confidence signals that cost model calls, run after the "
                "answer (their cost is in confidence.cost): nli asks the model whether the "
                "cited passages state the answer; consistency has it answer again from them "
                "(5 samples) and counts the agreeing ones; likelihood scores the answer as the "
                "model's reply to the question alone (one scoring call). Not given: the server's "
                "(`searchain serve --confidence-check`); [] for none.",
            ),
        ),
        abstain_below=(
            float | None,
            Field(
                None,
                ge=0.0,
                le=1.0,
                description="Withhold an answer whose confidence is below this "
                "(confidence.abstained; the guess stays the answer). With neither this nor "
                "max_risk, the server's threshold applies, if it has one.",
            ),
        ),
        max_risk=(
            float | None,
            Field(
                None,
                gt=0.0,
                lt=1.0,
                description="Withhold answers below the threshold that keeps the error rate "
                "among answered questions at most this, with probability 0.9 under "
                "exchangeability with the calibration items (the terms are in "
                "confidence.note); 422 for a method with no calibrator for this model.",
            ),
        ),
    )
