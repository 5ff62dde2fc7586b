"""``--retriever llm-url[:OPTIONS]``: open an LLM-URL retriever from a command-line spec.

    llm-url                                   real en.wikipedia.org, m=10, 10 train demos
    llm-url:http://127.0.0.1:8765             the same through a mirror (searchain mirror serve)
    llm-url:base=http://127.0.0.1:8765,m=5,shots=0,ranker=dense

Options (comma-separated ``key=value``; a bare URL means ``base=``): ``base`` (mirror of the
Wikipedia host; a loopback mirror is opted in for exactly its host:port), ``m`` (URLs asked for,
1-10), ``shots`` (few-shot demos, 0-10; 0 = zero-shot), ``demos`` (JSONL of {question, urls}),
``ranker`` (bm25 or dense), ``words`` (passage size), ``concurrency``, ``per-host``,
``timeout`` (seconds), ``max-bytes``, ``retries``, ``cache`` (on/off), ``hosts`` (the
Wikipedia hosts a URL may name, ``+``-separated; default en.wikipedia.org).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from searchain.retrieval.llm_url.fetcher import FetchConfig
from searchain.retrieval.llm_url.retriever import LLMURLConfig, LLMURLRetriever

PREFIX = "llm-url"
_FETCH = {"concurrency": int, "per-host": int, "timeout": float, "max-bytes": int, "retries": int}
_NAMES = {"per-host": "per_host", "timeout": "timeout_s", "max-bytes": "max_bytes"}


def is_llm_url_spec(spec: str) -> bool:
    return spec == PREFIX or spec.startswith(PREFIX + ":")


def parse_spec(spec: str) -> LLMURLConfig:
    """The configuration a spec names; ValueError says what is wrong with it."""
    if not is_llm_url_spec(spec):
        raise ValueError(f"not an llm-url spec: {spec!r}")
    rest = spec[len(PREFIX) + 1 :]
    options: dict[str, str] = {}
    if rest.startswith(("http://", "https://")) and "," not in rest:
        options["base"] = rest
    elif rest:
        for part in rest.split(","):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"llm-url option {part!r} is not key=value")
            options[key.strip().lower()] = value.strip()
    fetch: dict[str, Any] = {}
    main: dict[str, Any] = {}
    try:
        for key, value in options.items():
            if key == "base":
                fetch["base_url"] = value
            elif key in _FETCH:
                fetch[_NAMES.get(key, key)] = _FETCH[key](value)
            elif key == "hosts":
                fetch["allowed_hosts"] = tuple(h.strip().lower() for h in value.split("+") if h)
            elif key == "cache":
                fetch["cache"] = value.lower() in ("1", "on", "true", "yes")
            elif key in ("m", "shots", "words"):
                main["max_words" if key == "words" else key] = int(value)
            elif key in ("demos", "ranker"):
                main[key] = value
            else:
                raise ValueError(
                    f"unknown llm-url option {key!r}; known: base, m, shots, demos, ranker, "
                    "words, concurrency, per-host, timeout, max-bytes, retries, cache, hosts"
                )
        return LLMURLConfig(fetch=FetchConfig(**fetch), **main)
    except (TypeError, ValueError) as e:
        raise ValueError(f"bad llm-url spec {spec!r}: {e}") from None


def open_llm_url(spec: str, llm: Any = None) -> LLMURLRetriever:
    """An LLM-URL retriever for ``spec``; without ``llm``, the one default model
    (``make_llm("local")``: ``$SEARCHAIN_MODEL``, else Qwen2.5-Coder-1.5B-Instruct)."""
    config = parse_spec(spec)
    if llm is None:
        from searchain.llm import make_llm

        llm = make_llm("local")
    return LLMURLRetriever(llm, config)


def describe(config: LLMURLConfig) -> dict[str, Any]:
    """The configuration as plain data (run manifests)."""
    return dataclasses.asdict(config)
