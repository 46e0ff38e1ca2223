"""The exported graph's interface: its input and output names and the opsets it is written in
(no torch here, so that the command line reads them cheaply).

Graph format 2 (FORMAT_VERSION): the graph takes the characters of the tokens whose embeddings
the runner has not cached and the cached embeddings of the others, and returns, beside every layer,
the embeddings it computed (so that the character CNN runs once per distinct token string).

A biLM with learned vocabularies (ELMoForManyLangs) takes LEXICON_INPUT_NAME in place of
INPUT_NAME, and its graph's metadata holds the vocabularies under LEXICON_KEY
(`LexiconMapper.to_json`), from which the runner maps tokens without torch."""

FORMAT_VERSION = 2
INPUT_NAME = "char_ids"  # int64 (n_new, max_characters): the tokens to encode
KNOWN_NAME = "known"  # float32 (n_known, P): cached token embeddings
INDEX_NAME = "token_index"  # int64 (batch, n_tokens): each slot's row of [known; new]
LENGTHS_NAME = "lengths"  # int64 (batch,): each sentence's number of tokens
INPUT_NAMES = (INPUT_NAME, KNOWN_NAME, INDEX_NAME, LENGTHS_NAME)
# int64 (n_new, max_characters + 1): the tokens to encode, character ids then word id (`Lexicon.encode`)
LEXICON_INPUT_NAME = "lexicon_ids"
LEXICON_INPUT_NAMES = (LEXICON_INPUT_NAME, *INPUT_NAMES[1:])
LEXICON_KEY = "spacy_elmo.lexicon"  # metadata: the vocabularies of LEXICON_INPUT_NAME's ids
# metadata, "1": the LSTM loops compute only the rows of each step whose sentences it has not
# passed, so a batch of any lengths is best one run. Every graph `export_onnx` writes carries it;
# `OnnxBiLM` refuses a graph without it.
ACTIVE_ROWS_KEY = "spacy_elmo.active_rows"
# The producer name ONNX Runtime's quantizer gives the graphs it writes: an int8 graph (`quantize_onnx`).
INT8_PRODUCER = "onnx.quantize"
OUTPUT_NAME = "layers"  # float32 (n_layers, batch, n_tokens, 2P)
EMBEDDINGS_NAME = "token_embeddings"  # float32 (n_new, P): the new tokens' embeddings
OUTPUT_NAMES = (OUTPUT_NAME, EMBEDDINGS_NAME)
DEFAULT_OPSET = 17
# The sentence an exported graph is checked on against the biLM it came from.
CHECK_SENTENCE = ["The", "model", "was", "exported", "to", "ONNX", "."]
# Opsets of the TorchScript-based exporter that give this graph (operators' axes as inputs from 13).
OPSETS = range(13, 21)
