"""The records of ``bench.real_docs_answers``: one scored JSON line an arm and question, the
whole trace of a searchain answer beside it, and the folder's manifest. A part of that bench,
not one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.kit import ROOT, part_of
from searchain.eval.document_records import traces_path
from searchain.scoring.document_answers import source_type
from searchain.types import strict_dumps

# -- records --------------------------------------------------------------------------------


def append(out: Path, q: dict, arm: str, model: str, record: dict, seconds: float) -> None:
    row = {"id": q["id"], "arm": arm, "model": model, "kind": q["kind"], "type": source_type(q)}
    row |= record | {"seconds": round(seconds, 2)}
    with out.open("a") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
    mark = "ok" if row["status"] == "ok" else "FAILED"
    said = f"right {row.get('right_whole')} cover-EM {row.get('cover_em')}"
    print(f"{arm} {q['id']}: {mark} {said} {seconds:.1f} s", file=sys.stderr)


def append_trace(out: Path, q: dict, trace: Any) -> None:
    """The whole trace of ``q``'s answer (its confidence signals and configuration are read
    from it: a calibrator is fit on them), one strict-JSON line; on a rerun the last wins."""
    with traces_path(out).open("a") as f:
        f.write(strict_dumps({"id": q["id"], "trace": trace.to_dict()}, ensure_ascii=False))
        f.write("\n")


def write_manifest(folder: Path, update: dict[str, Any]) -> None:
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text()) if path.exists() else {}
    manifest.update(update)
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


def git_commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True)
    return done.stdout.decode().strip() or "unknown"


if __name__ == "__main__":
    part_of(__doc__, "python -m bench.real_docs_answers")
