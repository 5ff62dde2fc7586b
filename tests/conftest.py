"""Shared test helpers."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Let the tests run from a plain checkout too (``pip install -e .`` makes this a no-op).
_SRC = Path(__file__).resolve().parents[1] / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))


# `searchain ask`/`serve` and the Python API answer with the 1.5B instruct model unless told
# otherwise; the tests name the model they need, so the suite's time does not grow with that
# default (and the 1.5B is not in the test extra). Subprocesses inherit it.
os.environ["SEARCHAIN_MODEL"] = "gemma-3-270m"


def shared_data_dir() -> Path:
    """The read-only benchmark data, ``../shared/data`` next to the repository."""
    return Path(__file__).resolve().parents[2] / "shared" / "data"


DATA_DIR = shared_data_dir()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    # The benchmark data is part of the test setup: a missing copy fails, never skips.
    if not DATA_DIR.is_dir():
        pytest.fail(f"shared data not found at {DATA_DIR} (expected ../shared/data)")
    return DATA_DIR


@pytest.fixture(scope="session")
def hotpot_path(data_dir: Path) -> Path:
    """The 500 HotpotQA dev questions (IRCoT subsample) whose contexts form the pooled corpus."""
    return data_dir / "hotpotqa" / "dev_subsampled.jsonl"


@pytest.fixture(scope="session")
def hotpot(hotpot_path: Path) -> list[dict]:
    with hotpot_path.open() as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="session")
def index(tmp_path_factory: pytest.TempPathFactory):
    """The bundled HotpotQA demo index (what `ask` searches by default), built once for the
    session in its own cache. A test file with an index of its own defines ``index`` there."""
    from searchain.retrieval import default_index

    return default_index(cache_dir=tmp_path_factory.mktemp("demo-index-cache"))


CHAT_MODEL = "qwen2.5-coder-0.5b"  # the offline instruct model of the tests (test extra)


@pytest.fixture(scope="session")
def chat_model_path() -> Path:
    """Qwen2.5-Coder-0.5B-Instruct, assembled from its PyPI chunks and sha256-checked. The
    packages are in the test extra: a missing one fails, never skips."""
    from searchain.llm.models import model_path

    return model_path(CHAT_MODEL)


@pytest.fixture(scope="session")
def chat_llm(chat_model_path: Path):
    """The local chat client (the GGUF's own chat template, log-probs from our decode loop);
    1 thread: steadier than 2 when anything else runs on the machine."""
    from searchain.llm.local import LocalLLM

    llm = LocalLLM(chat_model_path, n_threads=1, api="auto")
    assert llm.form == "chat"
    return llm


@pytest.fixture(scope="session")
def chat_server(chat_model_path: Path):
    """A real ``llama_cpp.server`` serving the 0.5B instruct model on 127.0.0.1."""
    from servers import llama_server

    with llama_server(n_ctx=4096, alias=CHAT_MODEL, n_threads=1, model=chat_model_path) as url:
        yield url


@pytest.fixture()
def two_films(tmp_path: Path):
    """A BM25 index of two film passages: Jaws (Spielberg) and Star Wars (Lucas)."""
    import json

    from searchain.retrieval import BM25Index

    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {"id": "jaws", "title": "Jaws (film)",
         "text": "Jaws is a 1975 American thriller film directed by Steven Spielberg."},
        {"id": "star", "title": "Star Wars (film)",
         "text": "Star Wars is a 1977 space opera film written and directed by George Lucas."},
    ]  # fmt: skip
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return BM25Index.from_corpus(corpus, tmp_path / "idx")


@pytest.fixture
def own_calibrators(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The user's calibrators folder (found before the shipped ones), empty, in a fresh cache
    dir (a user's calibrator is read again whenever its file changes: nothing to forget)."""
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path))
    (tmp_path / "calibrators").mkdir()
    yield tmp_path / "calibrators"
