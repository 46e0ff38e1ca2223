"""Command line interface: ``python -m spacy_elmo COMMAND``."""
