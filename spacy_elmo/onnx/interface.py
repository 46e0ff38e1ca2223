"""The exported graph's interface: its input and output names and the opsets it is written in
(no torch here, so that the command line reads them cheaply)."""

INPUT_NAME = "char_ids"
OUTPUT_NAME = "layers"
DEFAULT_OPSET = 17
# Opsets of the TorchScript-based exporter that give this graph (operators' axes as inputs from 13).
OPSETS = range(13, 21)
