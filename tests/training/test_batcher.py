"""Row batching of the pretraining data (bilm-tf streaming) and its tensors."""

import json
from collections import Counter

from spacy_elmo.training.batcher import RowBatcher, to_tensors
from spacy_elmo.training.corpus import Cursor
from spacy_elmo.training.vocab import SoftmaxVocab


def test_rows_follow_bilm_tf_streaming():
    sentences = [["a", "b", "c"], ["d"], ["e", "f"], ["g", "h", "i", "j"]]
    stream = ((Cursor(0, 0, i + 1), s) for i, s in enumerate(sentences))
    batcher = RowBatcher(stream, batch_size=1, unroll_steps=4)
    first, second = batcher.next_window(), batcher.next_window()
    assert first.inputs[0] == [["<S>", "a", "b", "c"]] and first.targets[0] == [["a", "b", "c", "</S>"]]
    assert second.inputs[0] == [["</S>", "<S>", "d", "</S>"]] and second.targets[0] == [
        ["<S>", "d", "</S>", "<S>"]
    ]
    assert first.inputs[1] == [["</S>", "c", "b", "a"]] and first.targets[1] == [["c", "b", "a", "<S>"]]
    assert second.inputs[1] == [["<S>", "</S>", "d", "<S>"]]


def test_every_token_is_an_input_once_and_rows_resume_from_state():
    sentences = [[f"t{i}_{j}" for j in range(i % 5 + 1)] for i in range(40)]

    def stream(start=0):
        return ((Cursor(0, 0, i + 1), s) for i, s in enumerate(sentences) if i >= start)

    batcher = RowBatcher(stream(), batch_size=3, unroll_steps=4)
    windows = [batcher.next_window(drain=True)]
    saved = json.loads(json.dumps(batcher.state_dict()))
    rest = []
    while (w := batcher.next_window(drain=True)) is not None:
        rest.append(w)
    inputs = [t for w in windows + rest for row, n in zip(w.inputs[0], w.lengths) for t in row[:n]]
    words = Counter(t for t in inputs if t not in ("<S>", "</S>"))
    assert words == Counter(t for s in sentences for t in s)
    restored = RowBatcher(stream(saved["cursor"]["line"]), 3, 4, Cursor.from_dict(saved["cursor"]), saved)
    again = []
    while (w := restored.next_window(drain=True)) is not None:
        again.append(w)
    assert again == rest


def test_to_tensors_encodes_each_distinct_token_once():
    window = RowBatcher(iter([(Cursor(), ["a", "a", "b"])]), 1, 3).next_window()
    vocab = SoftmaxVocab(["<S>", "</S>", "<UNK>", "a"])
    seen = []

    def encode(tokens):
        seen.append(list(tokens))
        return [[len(t)] * 2 for t in tokens]

    batch = to_tensors(window, encode, vocab)
    assert sorted(seen[0]) == ["</S>", "<S>", "a", "b"]
    assert batch.token_index.shape == (2, 1, 3) and batch.n_tokens == 3
    assert batch.targets.tolist() == [[[3, 3, 2]], [[2, 3, 3]]]
