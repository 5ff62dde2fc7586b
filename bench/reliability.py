"""Security and reliability figures (issue 20), each printed with its target, against real
local servers on 127.0.0.1 (the service, the SSRF-safe fetcher and the OpenAI client are the
real ones; searchain.net.faults has the misbehaving servers):

* SSRF refused / total, direct, via redirect, via DNS; connects to disallowed addresses;
* worst wall time ÷ timeout for a slow body, slow headers, stalled DNS, charset decoding (and
  the LLM client's slow headers and hang);
* canary secrets in every artifact (manifest, results, HTTP bodies, logs, tool output) and in
  outbound requests; per-request options that can name a path or URL;
* per LLM endpoint fault: attempts, wall time, what was recorded (every item, none lost);
* items lost/duplicated after kill -9 at 20 random points, with a corrupt middle line, with
  two concurrent writers; the answer slot's release after a 504; 500s under Schemathesis;
* the OpenAI-compatible and MCP faces: rate limit and answer slots under a loopback load
  (429s, nothing lost or hung), forbidden options through both (refused, no model call).

tests/bench/test_reliability.py asserts every figure. Exit status 1 if any misses its target.

    .venv/bin/python -m bench.reliability [--only ssrf,deadlines,...] [--points 20]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable

from bench import reliability_faces as faces
from bench import reliability_net as net
from bench import reliability_runs as runs
from bench import reliability_service as service
from bench.kit import Figure


def groups(points: int, examples: int) -> dict[str, Callable[[], list[Figure]]]:
    return {
        "ssrf": net.ssrf,
        "deadlines": net.deadlines,
        "canaries": service.canaries,
        "options": service.options,
        "llm-faults": runs.llm_faults,
        "durability": lambda: runs.durability(points=points),
        "slot": service.slot_release,
        "schemathesis": lambda: service.schemathesis_500s(examples),
        "faces": faces.faces,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="", help="comma-separated groups (default: all)")
    p.add_argument("--points", type=int, default=20, help="kill -9 points")
    p.add_argument("--examples", type=int, default=15,
                   help="Schemathesis examples per endpoint and mode")  # fmt: skip
    args = p.parse_args()
    logging.basicConfig(level=logging.CRITICAL)  # the faults are on purpose: keep it quiet
    chosen = groups(args.points, args.examples)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(chosen)
    failed = 0
    for name in names:
        t0 = time.monotonic()
        figures = chosen[name]()
        print(f"## {name} ({time.monotonic() - t0:.0f} s)", flush=True)
        for f in figures:
            print(f.line(), flush=True)
            failed += not f.ok
    print(f"\n{'all figures on target' if not failed else f'{failed} figure(s) off target'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
