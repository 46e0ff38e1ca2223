"""Thinc layers of spacy-elmo: the biLM wrapper, the listener and the scalar mix."""
