"""Entry point of ``python -m spacy_elmo``."""
import os

# OpenMP threads that sleep while they wait instead of spinning: beside another busy process,
# spinning threads made `nlp.pipe` with 2 threads slower than with 1 (see docs/performance.md).
# Read when torch loads, so set before any command imports it; an exported value wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .cli.main import main  # noqa: E402

if __name__ == "__main__":
    main()
