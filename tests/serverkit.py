"""Shared pieces of the service's tests: the real engine (embedded model + demo BM25 index),
a small evaluation run made by the real `searchain eval`, and a started server."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from typer.testing import CliRunner

from searchain.cli import app as cli_app
from searchain.llm import make_llm
from searchain.retrieval.demo import default_index
from searchain.server import Engine, Settings, create_app, running

# Real HotpotQA question (dev_subsampled.jsonl, line 1) and small, fast SearChain options.
QUESTION = (
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?"
)
FAST_SEARCHAIN = {"r_max": 2, "max_tokens": 64, "trace_max_tokens": 48}


def make_engine(cache_file: Path, max_concurrent: int = 1) -> Engine:
    """The embedded model (its calls cached in ``cache_file``, fresh per test session, so the
    first call of each prompt is real) and the demo BM25 index."""
    llm = make_llm("local", model="gemma-3-270m", cache=cache_file)
    return Engine(llm, default_index(), max_concurrent=max_concurrent)


def make_run(runs_dir: Path, name: str = "hp", limit: int = 3) -> Path:
    """A real evaluation run: `searchain eval` with retrieve-read on HotpotQA questions."""
    out = runs_dir / name
    result = CliRunner().invoke(
        cli_app,
        ["eval", "--dataset", "hotpotqa", "--methods", "retrieve-read", "--limit", str(limit),
         "--concurrency", "1", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, (result.output, repr(result.exception))
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == limit, lines
    assert all(json.loads(line)["status"] == "ok" for line in lines)
    return out


@contextlib.contextmanager
def serving(engine: Engine, **settings: object) -> Iterator[str]:
    with running(create_app(engine, Settings(**settings))) as url:  # type: ignore[arg-type]
        yield url
