"""The LlamaIndex arm of ``bench.real_docs_answers``: LlamaIndex's documented defaults over the
same documents and model, run by its own Python (``setup`` makes its environment) against a
``llama_cpp.server`` this bench starts on 127.0.0.1. A part of that bench, not one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.kit import ROOT, part_of
from bench.real_docs_recall import CACHE
from bench.real_docs_records import append
from bench.real_docs_sets import PEER
from searchain.llm.llama_server import free_port, wait_ready
from searchain.scoring.document_answers import alias_scores, score, view

PEER_VENV = CACHE / "llamaindex-venv"
PEER_PACKAGES = (
    "llama-index-core",
    "llama-index-llms-openai-like",
    "llama-index-retrievers-bm25",
    "llama-index-readers-file",
)
WORKER = ROOT / "bench" / "real_docs_llamaindex.py"
CHAT_FORMATS = {"gemma-3-270m": "gemma"}
SERVER_CTX = 16384  # the served context, and what LlamaIndex is told the model's window is


# -- the LlamaIndex arm ---------------------------------------------------------------------


def peer_python() -> Path:
    return PEER_VENV / "bin" / "python"


def peer_versions() -> dict[str, str]:
    done = subprocess.run(
        [str(peer_python()), str(WORKER), "--versions"], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)["versions"]


def peer_command(corpus: Path, url: str, model: str) -> list[str]:
    command = [str(peer_python()), str(WORKER), "--corpus", str(corpus), "--base-url", url]
    return [*command, "--model", model, "--context-window", str(SERVER_CTX)]


def start_server(gguf: Path, model: str, threads: int, log: Path) -> tuple[Any, str]:
    """``llama_cpp.server`` on 127.0.0.1 with the GGUF, ``threads`` for prompt and generation."""
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf)]
    command += ["--model_alias", model, "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_ctx", str(SERVER_CTX), "--n_threads", str(threads)]
    command += ["--n_threads_batch", str(threads)]
    # The server's default keeps the logits of every prompt position (n_ctx x vocabulary
    # floats: 10 GB for Qwen at this context) and computes them all; nothing here reads them.
    command += ["--logits_all", "false"]
    if model in CHAT_FORMATS:  # a GGUF without a chat template (the server would guess llama-2)
        command += ["--chat_format", CHAT_FORMATS[model]]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_ready(server, url, log, limit_s=600)  # a 1.5B model loads slowly
    except BaseException:  # not ready, or the run stopped meanwhile: the server goes too
        stop(server)
        raise
    return server, url


def relative(path: str | None, corpus: Path) -> str:
    try:
        return str(Path(path or "").resolve().relative_to(corpus.resolve()))
    except ValueError:
        return str(path)


def peer_record(q: dict[str, Any], result: dict[str, Any], corpus: Path) -> dict[str, Any]:
    if "error" in result:
        return {"status": "failed", "error": result["error"]}
    sources = [
        view(relative(s["file_path"], corpus), s.get("page"), s["text"]) for s in result["sources"]
    ]
    return {
        "status": "ok",
        "answer": result["answer"],
        **score(q, result["answer"], sources, sources),
        **alias_scores(q, result["answer"], None),  # no short answer: the reply is one
        "cited": [
            {"file": v["file"], "page": v["page"], "page_label": s.get("page_label")}
            for v, s in zip(sources, result["sources"], strict=True)
        ],
        "llm_calls": result.get("llm_calls"),
        "prompt_tokens": result.get("prompt_tokens"),
        "completion_tokens": result.get("completion_tokens"),
    }


def run_peer(model: str, todo: list[dict], out: Path, threads: int, corpus: Path) -> dict:
    """Answer ``todo`` with the LlamaIndex pipeline; returns its header (versions, sizes)."""
    from searchain.llm.models import model_path

    if not peer_python().exists():
        raise SystemExit(
            f"no LlamaIndex environment at {PEER_VENV}: "
            "run `python -m bench.real_docs_answers setup`"
        )
    server, url = start_server(
        model_path(model), model, threads, CACHE / "real-docs" / f"llama-server-{model}.log"
    )
    worker = None
    try:
        worker = subprocess.Popen(
            peer_command(corpus, url, model),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert worker.stdin is not None and worker.stdout is not None
        for q in todo:
            worker.stdin.write(json.dumps({"id": q["id"], "question": q["question"]}) + "\n")
        worker.stdin.close()
        header: dict[str, Any] = {}
        by_id = {q["id"]: q for q in todo}
        for line in worker.stdout:
            try:
                result = json.loads(line)
            except json.JSONDecodeError:  # a library's print: not ours to parse
                print(line, end="", file=sys.stderr)
                continue
            if "versions" in result:
                header = result
                print(f"LlamaIndex: {json.dumps(header)}", file=sys.stderr)
                continue
            q = by_id[result["id"]]
            append(out, q, PEER, model, peer_record(q, result, corpus), result["seconds"])
        if worker.wait() != 0:
            print(f"the LlamaIndex worker exited with {worker.returncode}", file=sys.stderr)
        return header
    finally:
        stop(worker)
        stop(server)


def stop(process: Any) -> None:
    """End a process this bench started (the server finishes its request on SIGTERM: not
    waited for beyond a few seconds)."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


if __name__ == "__main__":
    part_of(__doc__, "python -m bench.real_docs_answers")
