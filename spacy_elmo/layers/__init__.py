"""Thinc layers of spacy-elmo: the ELMo model (docs to biLM layers), the listener and the scalar mix."""
