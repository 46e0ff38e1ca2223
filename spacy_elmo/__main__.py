"""Entry point of ``python -m spacy_elmo``."""
from .cli.main import main

if __name__ == "__main__":
    main()
