"""REBEL's tools: the schema validator, the safe calculator, tools files, and the HTTP tool
against a real local server — hostile model inputs are refused before any request, and
static parameters (API keys) never show up in outputs, errors or logs."""

from __future__ import annotations

import logging
import re
import traceback
import urllib.parse
from pathlib import Path

import pytest

from searchain.net.safe_http import HttpPolicy
from searchain.retrieval import default_index
from searchain.tools import (
    Calculator,
    FunctionTool,
    HttpTool,
    SearchTool,
    ToolConfigError,
    ToolError,
    ToolInputError,
    ToolRefusedError,
    calculate,
    load_tools,
)
from searchain.tools.schema import SchemaError, ValidationError, check_schema, validate
from tool_server import FactServer, load_facts

KEY = "sk-Secret+key/with=chars"
KEY_FORMS = (KEY, urllib.parse.quote(KEY, safe=""), urllib.parse.quote_plus(KEY))
Q_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string", "maxLength": 200}},
    "required": ["q"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def server(data_dir: Path):
    with FactServer(load_facts(data_dir), KEY) as srv:
        yield srv


def fact_tool(server: FactServer, **http) -> HttpTool:
    policy = HttpPolicy(
        allowed_domains=("127.0.0.1",), allow_private=(f"127.0.0.1:{server.port}",), **http
    )
    return HttpTool(
        "facts",
        "Fact search about people and countries.",
        Q_SCHEMA,
        url=server.url + "/search",
        static_params={"api_key": KEY},
        policy=policy,
    )


def url_tool(server: FactServer, path: str = "", **http) -> HttpTool:
    """A fetch-this-URL tool: the model writes the whole URL (the riskiest kind)."""
    policy = HttpPolicy(allow_private=(f"127.0.0.1:{server.port}",), **http)
    return HttpTool(
        "fetch",
        "Fetch a web page.",
        {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
        url="{url}",
        policy=policy,
    )


def assert_no_secret(text: str) -> None:
    for form in KEY_FORMS:
        assert form not in text


# -- schema ---------------------------------------------------------------------------------
def test_schema_validation_messages_say_where_and_why() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 2, "maxLength": 20},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "unit": {"enum": ["C", "F"]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    check_schema(schema)
    assert validate(schema, {"city": "Oslo", "days": 3.0}) == {"city": "Oslo", "days": 3}
    cases = {
        "missing required parameter 'city'": {},
        "input.days: expected integer": {"city": "Oslo", "days": "3"},
        "input.days: 9 is above the maximum 7": {"city": "Oslo", "days": 9},
        "input.unit: 'K' is not one of": {"city": "Oslo", "unit": "K"},
        "input.tags[1]: expected string": {"city": "Oslo", "tags": ["a", 2]},
        "unknown parameter(s) ['url']": {"city": "Oslo", "url": "http://x"},
        "input.days: expected integer, got True": {"city": "Oslo", "days": True},
    }
    for message, value in cases.items():
        with pytest.raises(ValidationError, match=re.escape(message)):
            validate(schema, value)


def test_schemas_with_unsupported_keywords_are_refused() -> None:
    with pytest.raises(SchemaError, match="unsupported schema keyword"):
        check_schema({"type": "object", "properties": {"a": {"oneOf": []}}})
    with pytest.raises(SchemaError, match="not in properties"):
        check_schema({"type": "object", "properties": {}, "required": ["a"]})


# -- calculator -----------------------------------------------------------------------------
def test_calculator_does_arithmetic_and_refuses_everything_else() -> None:
    assert calculate("2 + 3 * 4") == 14
    assert calculate("floor(33.93)") == 33
    assert calculate("2^10") == 1024
    assert round(calculate("sqrt(2) * pi"), 4) == 4.4429
    calc = Calculator()
    assert calc.invoke({"expression": "round(7 / 3, 2)"}).text == "2.33"
    with pytest.raises(ToolError, match=r"^tool 'calculator': division by zero"):
        calc.invoke({"expression": "1 % 0"})
    hostile = {
        "__import__('os').system('true')": "not allowed",
        "__import__('os')": "unknown function",
        "open('/etc/passwd')": "unknown function",
        "(1).__class__": "not allowed",
        "'a' * 10": "only numbers",
        "9 ** 9 ** 9": "exponents are limited",
        "10 ** 200 * 10 ** 200": "exceeds",
        "1 / 0": "division by zero",
        "exp(10000)": "exp",
        "x + 1": "not allowed",
        "1 +": "not an arithmetic expression",
        "1" * 400: "longer than",
    }
    for expr, why in hostile.items():
        with pytest.raises(ToolError, match=why):
            calc.invoke({"expression": expr})
    with pytest.raises(ToolInputError, match="missing required parameter 'expression'"):
        calc.invoke({"expr": "1+1"})


# -- search and Python tools ----------------------------------------------------------------
def test_search_tool_returns_passages(tmp_path_factory: pytest.TempPathFactory) -> None:
    tool = SearchTool(default_index(cache_dir=tmp_path_factory.mktemp("cache")), k=2)
    out = tool.invoke({"query": "Corliss Archer Kiss and Tell"})
    assert len(out.passages) == 2
    assert out.text.startswith("[1] ") and out.passages[0].title in out.text


def test_function_tool_validates_then_reports_failures() -> None:
    calls = []

    def lookup(city: str) -> str:
        calls.append(city)
        if city == "Nowhere":
            raise KeyError(city)
        return f"{city}: sunny"

    tool = FunctionTool("weather", "Weather in a city.", {"properties": {"city": {
        "type": "string"}}, "required": ["city"]}, lookup)  # fmt: skip
    assert tool.invoke({"city": "Oslo"}).text == "Oslo: sunny"
    with pytest.raises(ToolInputError, match="no call was made"):
        tool.invoke({"city": 5})
    with pytest.raises(ToolInputError, match=re.escape("unknown parameter(s) ['days']")):
        tool.invoke({"city": "Oslo", "days": 3})  # undeclared: refused by default
    with pytest.raises(ToolError, match="KeyError"):
        tool.invoke({"city": "Nowhere"})
    assert calls == ["Oslo", "Nowhere"]


# -- tools files ----------------------------------------------------------------------------
def test_yaml_and_toml_tools_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTS_KEY", KEY)
    (tmp_path / "tools.yaml").write_text(
        "tools:\n"
        "  - builtin: calculator\n"
        "  - name: facts\n"
        "    description: Fact search.\n"
        "    parameters: {q: what to search for}\n"
        "    http:\n"
        "      url: http://127.0.0.1:8123/search\n"
        "      static_params: {api_key: '${FACTS_KEY}'}\n"
        "      allow_private: ['127.0.0.1:8123']\n"
        "      timeout_s: 3\n"
    )
    (tmp_path / "tools.toml").write_text(
        '[[tools]]\nname = "facts"\ndescription = "Fact search."\n'
        '[tools.parameters]\nq = "what to search for"\n'
        '[tools.http]\nurl = "http://127.0.0.1:8123/search"\n'
        'static_params = { api_key = "${FACTS_KEY}" }\nallow_private = ["127.0.0.1:8123"]\n'
        "timeout_s = 3\n"
    )
    calc, yaml_tool = load_tools(tmp_path / "tools.yaml")
    (toml_tool,) = load_tools(tmp_path / "tools.toml")
    assert isinstance(calc, Calculator)
    for tool in (yaml_tool, toml_tool):
        assert isinstance(tool, HttpTool)
        assert tool.static_params == {"api_key": KEY}
        assert tool.policy.allow_private == ("127.0.0.1:8123",)
        assert tool.policy.allowed_domains == ("127.0.0.1",)  # default: the template's host
        assert tool.policy.timeout_s == 3
        assert tool.parameters["required"] == ["q"]
        assert tool.params_hint() == '{"q": what to search for}'
        assert_no_secret(repr(tool))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tools: []", "non-empty list"),
        ("tools:\n  - builtin: shell", "unknown builtin 'shell'"),
        ("tools:\n  - name: x\n    description: d\n    http: {url: 'http://{host}/a'}\n"
         "    parameters: {host: h}", "may not set the scheme or host"),
        ("tools:\n  - name: x\n    description: d\n    http: {url: 'file:///etc/passwd'}",
         "must be an http"),
        ("tools:\n  - name: x\n    description: d\n    http: {url: 'http://a.org',"
         " allow_privat: []}", "unknown http setting"),
        ("tools:\n  - name: x\n    description: d\n    http: {url: 'http://a.org',"
         " static_params: {k: '${NOPE_NOT_SET}'}}", "NOPE_NOT_SET is not set"),
        ("tools:\n  - name: x\n    description: d\n    parameters: {url: u}\n"
         "    http: {url: '{url}', static_params: {k: v}}", "needs allowed_hosts"),
        ("tools:\n  - builtin: calculator\n  - builtin: calculator", "must be unique"),
        ("tools: [", "tools.yaml"),
    ],
)  # fmt: skip
def test_bad_tools_files_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text(text)
    with pytest.raises(ToolConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_tools(path)


# -- the HTTP tool, against a real local server ---------------------------------------------
def test_http_tool_calls_the_api_with_the_hidden_key(server: FactServer) -> None:
    tool = fact_tool(server)
    before = len(server.requests)
    out = tool.invoke({"q": "birthplace of Rumi"})
    assert "What is the birthplace (country only) of Rumi? Afghanistan." in out.text
    assert out.meta["status"] == 200
    assert server.requests[before:] and urllib.parse.quote_plus(KEY) in server.requests[-1]
    assert_no_secret(repr(out.meta))  # the URL in the trace has the key redacted
    assert "api_key=***" in out.meta["url"]


def test_an_echoed_key_is_redacted_from_the_output(server: FactServer) -> None:
    tool = fact_tool(server)
    tool.url = server.url + "/echo"
    out = tool.invoke({"q": "x"})
    assert "***" in out.text
    assert_no_secret(out.text)


def test_path_parameters_cannot_leave_the_path(server: FactServer) -> None:
    tool = HttpTool(
        "person", "Facts about a person.",
        {"properties": {"name": {"type": "string"}}, "required": ["name"]},
        url=server.url + "/search/{name}",
        policy=HttpPolicy(allow_private=(f"127.0.0.1:{server.port}",)),
    )  # fmt: skip
    before = len(server.requests)
    out = tool.invoke({"name": "../echo?api_key=x#@10.0.0.1"})
    (path,) = server.requests[before:]
    assert path == "/search/..%2Fecho%3Fapi_key%3Dx%23%4010.0.0.1"
    assert out.meta["url"] == f"{server.url}{path}"  # stayed on /search/..., reached nothing else


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///etc/passwd", "scheme 'file' not allowed"),
        ("gopher://127.0.0.1:70/", "scheme 'gopher' not allowed"),
        ("http://169.254.169.254/latest/meta-data/", "private, loopback or reserved"),
        ("http://10.0.0.1/admin", "private, loopback or reserved"),
        ("http://2130706433/", "private, loopback or reserved"),  # decimal 127.0.0.1
        ("http://0x7f000001/", "private, loopback or reserved"),  # hex 127.0.0.1
        ("http://0177.0.0.1/", "private, loopback or reserved"),  # octal
        ("http://[::ffff:127.0.0.1]/", "private, loopback or reserved"),
        ("http://localhost/", "is local"),
        ("http://user@127.0.0.1/", "user-info"),
    ],
)
def test_hostile_urls_are_refused_before_any_request(
    server: FactServer, url: str, why: str
) -> None:
    tool = url_tool(server)
    before = len(server.requests)
    with pytest.raises(ToolRefusedError, match=why) as err:
        tool.invoke({"url": url})
    assert str(err.value).startswith("tool 'fetch' refused the request:")
    assert len(server.requests) == before


def test_only_the_opted_in_port_of_loopback_is_reachable(server: FactServer) -> None:
    tool = url_tool(server)
    other = server.port + 1 if server.port < 65535 else server.port - 1
    with pytest.raises(ToolRefusedError, match="private, loopback or reserved"):
        tool.invoke({"url": f"http://127.0.0.1:{other}/search"})
    good = f"{server.url}/search?q=Rumi&api_key={urllib.parse.quote_plus(KEY)}"
    assert tool.invoke({"url": good}).meta["status"] == 200


def test_redirects_size_and_time_are_bounded(server: FactServer) -> None:
    tool = url_tool(server, max_bytes=100_000, timeout_s=1.5)
    with pytest.raises(ToolRefusedError, match="private, loopback or reserved"):
        tool.invoke({"url": server.url + "/redirect"})  # 302 to http://10.0.0.1/
    big = tool.invoke({"url": server.url + "/big"})
    assert big.meta["truncated_bytes"] and len(big.text) == 100_000
    with pytest.raises(ToolError, match="timed out"):
        tool.invoke({"url": server.url + "/slow"})


def test_errors_and_logs_never_show_the_key(
    server: FactServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    failures = []
    for url, policy in [
        (server.url + "/slow", HttpPolicy(allow_private=(f"127.0.0.1:{server.port}",),
                                          timeout_s=0.5)),
        ("http://127.0.0.1:1/search", HttpPolicy(allow_private=("127.0.0.1:1",))),
        ("http://does-not-exist.invalid/search", HttpPolicy()),
    ]:  # fmt: skip
        tool = HttpTool("facts", "Facts.", {"properties": {"q": {"type": "string"}}},
                        url=url, static_params={"api_key": KEY}, policy=policy)  # fmt: skip
        with pytest.raises(ToolError) as err:
            tool.invoke({"q": "x"})
        failures.append(err.value)
    for e in failures:
        assert_no_secret(str(e))
        assert_no_secret(repr(e))
        assert_no_secret("".join(traceback.format_exception(e)))
    assert_no_secret(caplog.text)
