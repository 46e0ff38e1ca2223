"""Coreference glue: a corpus reader with gold tokens and the CoNLL-2012 scorer, for training
spacy-experimental's coreference components on ELMo features (the `coref` extra)."""
