"""The names spaCy's registries know the package's functions by, one constant each; setup.cfg's
entry points name the same (a test holds them together)."""

# The factories of the components (configs' `factory = "elmo"`).
ELMO_FACTORY = "elmo"
ELMO_COREF_FACTORY = "elmo_coref"
ELMO_MODEL = "spacy-elmo.ElmoModel.v2"
ELMO_MODEL_V1 = "spacy-elmo.ElmoModel.v1"  # configs and pipelines of spacy-elmo 0.2 (`dtype`, torch only)
ELMO_LISTENER = "spacy-elmo.ElmoListener.v1"
ELMO_EMBED = "spacy-elmo.ElmoEmbed.v1"
SCALAR_MIX = "spacy-elmo.ScalarMix.v1"
COREF_CORPUS = "spacy-elmo.CorefCorpus.v1"
COREF_CONLL_SCORER = "spacy-elmo.coref_conll_scorer.v1"
WORD_COREF = "spacy-elmo.WordCoref.v1"
