"""Coreference: `elmo_coref` (word-level coreference in thinc, `spacy_elmo.coref.component`),
a corpus reader with gold tokens and the CoNLL-2012 and LEA scorers; the reader and scorer also
serve spacy-experimental's coreference components (the `coref` extra)."""
