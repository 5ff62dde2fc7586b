"""``python -m searchain.cli`` (what the tests and benchmarks spawn) runs the command line."""

from searchain.cli import main

main()
