"""The NumPy sentence encoder (readers/bert_numpy.py) against sentence-transformers on the
packaged all-MiniLM-L6-v2: same vectors, no torch import, a clear fallback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from searchain.readers.bert_numpy import NumpySentenceEncoder, UnsupportedModel, check_supported
from searchain.readers.query_memory import QueryMemory
from searchain.readers.st_embedder import Embedder, default_embedder_path

HOTPOT = (
    Path(__file__).resolve().parents[3] / "shared" / "data" / "hotpotqa" / "dev_subsampled.jsonl"
)


def _texts() -> list[str]:
    with HOTPOT.open(encoding="utf-8") as f:
        questions = [
            json.loads(line)["question_text"] for _, line in zip(range(40), f, strict=False)
        ]
    long = " ".join(questions)  # far past max_seq_length: truncated the same way
    return [*questions, long, "", "Ünïcödé — 東京 café?", "a"]


def test_same_vectors_as_sentence_transformers() -> None:
    texts = _texts()
    ours = NumpySentenceEncoder(default_embedder_path()).encode(texts)
    theirs = Embedder(engine="torch").encode(texts)
    assert ours.shape == theirs.shape == (len(texts), 384)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert np.abs(ours - theirs).max() < 1e-5
    assert (ours * theirs).sum(1).min() > 1 - 1e-6
    # One text alone gives the vector it gets in a padded batch (the mask is honoured).
    alone = NumpySentenceEncoder(default_embedder_path()).encode([texts[3]])
    assert np.abs(alone[0] - ours[3]).max() < 1e-6


def test_query_memory_finds_the_same_duplicates_with_either_engine() -> None:
    queries = ["Who directed Big Stone Gap?", "Who is the director of Big Stone Gap?",
               "Who directed Big Stone Gap ?", "Where is Adriana Trigiani based?"]  # fmt: skip
    found = {}
    for engine in ("numpy", "torch"):
        memory = QueryMemory(Embedder(engine=engine), threshold=0.97)
        hits = []
        for q in queries:
            hit = memory.match(q)
            hits.append(None if hit is None else (hit[0], round(hit[1], 4)))
            memory.add(q)
        found[engine] = hits
    assert found["numpy"] == found["torch"]
    assert found["numpy"][2] is not None  # the spacing variant is a duplicate


def test_a_numpy_embedder_imports_no_torch() -> None:
    code = (
        "import sys\n"
        "from searchain.readers.st_embedder import Embedder\n"
        "e = Embedder(engine='numpy')\n"
        "v = e.encode(['Who is the director of Big Stone Gap?'])\n"
        "print(e.engine, v.shape[1], 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["numpy", "384", "False"]


def test_searchain_query_memory_uses_the_packaged_gguf_not_torch() -> None:
    # The query memory moved off MiniLM to the packaged GGUF embedder (llama.cpp, no torch);
    # this NumPy pass remains for indexes and runs of MiniLM (the hf extra).
    from searchain.methods.catalog import make_embedder
    from searchain.readers.gguf_embedder import GGUFEmbedder

    assert isinstance(make_embedder("embedding"), GGUFEmbedder)


def test_a_model_it_does_not_implement_falls_back_to_sentence_transformers(
    tmp_path: Path,
) -> None:
    model = tmp_path / "cls-pooled"
    shutil.copytree(default_embedder_path(), model)
    pooling = model / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text())
    cfg["pooling_mode_mean_tokens"], cfg["pooling_mode_cls_token"] = False, True
    pooling.write_text(json.dumps(cfg))
    with pytest.raises(UnsupportedModel, match="pooling"):
        check_supported(model)
    embedder = Embedder(model, engine="numpy")
    assert embedder.engine == "torch"
    # The fallback really is the CLS-pooled model: its vectors differ from mean pooling's.
    text = ["Who is the director of Big Stone Gap?"]
    cls_vec = embedder.encode(text)[0]
    mean_vec = Embedder(engine="numpy").encode(text)[0]
    assert float(cls_vec @ mean_vec) < 0.999


def test_a_directory_that_is_no_sentence_encoder_is_named(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedModel, match=str(tmp_path)):
        check_supported(tmp_path)
    with pytest.raises(ValueError, match="engine"):
        Embedder(engine="onnx")
