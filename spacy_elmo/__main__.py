"""Entry point of ``python -m spacy_elmo``."""
import os
import sys

from .runtime import omp_wait_policy

# Chosen per command before any command imports torch; an exported value wins.
os.environ.setdefault("OMP_WAIT_POLICY", omp_wait_policy(sys.argv[1] if len(sys.argv) > 1 else ""))

if __name__ == "__main__":
    from .cli.app import interrupt_is_one_line

    with interrupt_is_one_line():  # also while the commands load (torch, spaCy)
        from .cli.main import main

        main()
