"""Issue 28 item 6: each method's settings are declared once (its config dataclass, or the
builder's options beside it), and every surface — `ask`'s and `serve`'s options, -O, the
HTTP allow-list, `searchain settings`, GET /v1/methods' listing, the Python API — is derived
from that declaration, so a new setting is added in one place."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from searchain.cli import app
from searchain.cli import method_flags as mf
from searchain.cli.option_groups import grouped
from searchain.methods.catalog import (
    build_method,
    canonical_methods,
    given_to,
    method_settings,
)
from searchain.methods.settings import Setting, check_settings, setting, settings_of
from searchain.retrieval import default_index
from searchain.server import models

runner = CliRunner()


class NoCallLLM:
    """Building a method must not call its model; any call fails the test."""

    backend, model, defaults, form = "local", "none", None, "completion"

    def complete(self, *a: Any, **k: Any) -> Any:
        raise AssertionError("a method called its LLM while being built")

    chat = complete


def all_settings() -> list[tuple[str, Setting]]:
    return [(m, s) for m in canonical_methods() for s in method_settings(m)]


def help_of(*args: str) -> str:
    res = runner.invoke(app, [*args, "--help"], env={"COLUMNS": "300"}, terminal_width=300)
    assert res.exit_code == 0, res.output
    return res.output


def test_every_setting_reaches_its_surfaces() -> None:
    schema = models.AskOptions.model_json_schema()["properties"]
    ask_help, serve_help = help_of("ask"), help_of("serve")
    listed = json.loads(runner.invoke(app, ["settings", "--json"]).output)
    for method, s in all_settings():
        assert (s.name in schema) == s.remote, (method, s.name)  # HTTP: the remote ones only
        assert (s.name in models.SERVER_SIDE_OPTIONS) != s.remote, (method, s.name)
        if s.flag:
            assert f"--{s.flag}" in ask_help, (method, s.name)
            assert (f"--{s.flag}" in serve_help) == (not s.remote), (method, s.name)
        assert s.name in {d["name"] for d in listed[method]}
        assert s.check(s.default) == s.default  # every default is a valid value


@pytest.mark.parametrize("method", canonical_methods())
def test_every_setting_is_accepted_at_its_default_and_refused_out_of_range(method: str) -> None:
    """The Python API's (and -O's) path: build_method with each setting at its default
    builds the method; a value outside a setting's range or choices is a ValueError naming
    the setting, before any model call."""
    llm, index = NoCallLLM(), default_index()
    # they open files or models: not here
    fixed = {"reader", "tools", "nli", "reward_model", "reward_reference", "template"}
    for s in method_settings(method):
        if s.name in fixed:
            continue
        off = {"nli": None, "reward_reference": "none"}  # Think&Cite: no judge, no R_g pair
        given = {**given_to(method, {"dedup": "exact"}), **(off if method == "thinkcite" else {})}
        build_method(method, llm, index, **{**given, s.name: s.default})  # type: ignore[arg-type]
        bad = _bad_value(s)
        if bad is not None:
            with pytest.raises(ValueError, match=s.name):
                build_method(method, llm, index, **{**given, s.name: bad})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rf"{method} has no setting no_such_setting"):
        build_method(method, llm, index, no_such_setting=1)  # type: ignore[arg-type]


def _bad_value(s: Setting) -> Any:
    if s.choices:
        return "not-a-choice" if s.type is str else -12345
    if s.ge is not None:
        return s.type(s.ge - 1)
    if s.gt is not None:
        return s.type(s.gt)
    if s.type is bool:
        return "yes"  # text is no switch
    return None


def test_a_new_setting_needs_no_wiring(monkeypatch: pytest.MonkeyPatch) -> None:
    """Declare a setting on a config; a command that takes the flags group as `ask` does
    grows its option, passes the value on, and the HTTP allow-list derives its bounded
    field."""

    @dataclass
    class NewConfig:
        brand_new: int = setting(4, "A setting nobody wired.", ge=1, le=9, flag="brand-new")

        def __post_init__(self) -> None:
            check_settings(self)

    declared = settings_of(NewConfig)
    monkeypatch.setattr(mf, "method_settings", lambda m: declared if m == "searchain" else ())
    seen: dict[str, Any] = {}

    def command(question: str, *, flags: mf.MethodFlags) -> None:
        seen.update(flags.given)

    cli = typer.Typer()
    cli.command()(grouped(command))
    cli.command("other")(lambda: None)  # two commands: typer keeps the command's name
    res = runner.invoke(cli, ["command", "q?", "--brand-new", "7"])
    assert res.exit_code == 0, res.output
    assert seen == {"brand_new": 7}
    res = runner.invoke(cli, ["command", "--help"], terminal_width=200)
    assert "--brand-new" in res.output and "A setting nobody wired." in res.output
    _kind, field = models._request_field("brand_new", [("searchain", declared[0])])
    assert field.description.startswith("searchain: A setting nobody wired.")
    with pytest.raises(ValueError, match="brand_new must be at most 9"):
        NewConfig(brand_new=10)


def test_a_remote_number_without_bounds_is_refused_at_declaration() -> None:
    free = Setting(name="n", type=int, default=1, help="unbounded", ge=1)
    with pytest.raises(TypeError, match="upper bound"):
        models._request_field("n", [("searchain", free)])
    text = Setting(name="path", type=str, default=None, help="a path", nullable=True)
    with pytest.raises(TypeError, match="free text"):
        models._request_field("path", [("searchain", text)])


def test_cli_flags_go_to_the_method_that_takes_them() -> None:
    assert mf.flags_for("searchain", {"r_max": 2, "use_ir": False}) == {
        "r_max": 2,
        "use_ir": False,
    }
    with pytest.raises(ValueError, match=r"--iterations \(thinkcite\).*not of searchain"):
        mf.flags_for("searchain", {"max_iterations": 3})
    with pytest.raises(ValueError, match="not of searchain"):  # an ablation is SearChain
        mf.flags_for("searchain-no-ir", {"max_iterations": 3})


def test_ask_refuses_a_flag_or_option_its_method_does_not_take() -> None:
    res = runner.invoke(app, ["ask", "q?", "--method", "rebel", "--r-max", "2"])
    assert res.exit_code != 0 and "--r-max (searchain) is a setting of another method" in (
        res.output
    )
    res = runner.invoke(app, ["ask", "q?", "-O", "r_max=0"])
    assert res.exit_code != 0 and "r_max must be at least 1" in res.output
    res = runner.invoke(app, ["ask", "q?", "-O", "no_such=1"])
    assert res.exit_code != 0 and "searchain has no setting no_such" in res.output


def test_settings_command_lists_and_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    res = runner.invoke(app, ["settings", "rebel"], terminal_width=200)
    assert res.exit_code == 0 and "max_subquestions" in res.output and "--tools" in res.output
    res = runner.invoke(app, ["settings", "nope"])
    assert res.exit_code != 0 and "unknown method 'nope'" in res.output


def test_python_api_lists_the_settings() -> None:
    from searchain.api import settings

    names = [s.name for s in settings("thinkcite")]
    assert "max_iterations" in names and names.count("max_citations") == 1
