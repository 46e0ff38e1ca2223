"""Thinc layers of spacy-elmo: the ELMo model (docs to biLM layers, on torch or ONNX Runtime), the listener and the scalar mix."""
