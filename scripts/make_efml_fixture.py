"""Make tests/fixtures/efml: a tiny random ELMoForManyLangs model and its reference outputs.

Run in a side environment with the original package (not a dependency of spacy-elmo):

    python3.11 -m venv .venv-efml
    .venv-efml/bin/pip install torch==2.13.0   # first: a plain torch requirement pulls CUDA
    .venv-efml/bin/pip install elmoformanylangs==0.0.4.post2 overrides==3.1.0
    .venv-efml/bin/python scripts/make_efml_fixture.py tests/fixtures/efml

The model is built with the original classes and saved as the original training script saves it
(elmoformanylangs/biLM.py: `torch.save` of the two state dicts, `char.dic` and `word.dic` as
"token<TAB>id" lines, `config.json` of the training arguments naming the architecture file).
The state dicts are written in torch's legacy (pre-1.6) serialization, as the published models
were. The reference is `Embedder(folder).sents2elmo(sentences, output_layer=-2)`: all sentences
fit its first batch, so its stateful LSTMs start from zero as ours do.
"""
import json
import sys
from pathlib import Path

import numpy as np
import torch
from elmoformanylangs import Embedder
from elmoformanylangs.frontend import Model
from elmoformanylangs.modules.embedding_layer import EmbeddingLayer

ARCHITECTURE = {
    "encoder": {"name": "elmo", "projection_dim": 8, "cell_clip": 3, "proj_clip": 3, "dim": 16, "n_layers": 2},
    "token_embedder": {
        "name": "cnn",
        "activation": "relu",
        "filters": [[1, 4], [2, 4], [3, 8]],
        "n_highway": 2,
        "word_dim": 6,
        "char_dim": 5,
        "max_characters_per_token": 10,
    },
    "classifier": {"name": "sampled_softmax", "n_samples": 16},
    "dropout": 0.1,
}
TRAINING_TEXT = ["今天 天氣 真 好", "潮水 退 了 就 知道 誰 沒 穿 褲子", "the cat sat on the mat", "a dog ran"]
SENTENCES = [
    ["今", "天", "天氣", "真", "好", "阿"],  # Chinese, "阿" not in word.dic
    ["the", "cat", "sat", "on", "the", "mat"],  # English
    ["a", "supercalifragilistic", "dog"],  # longer than max_characters_per_token - 2
    ["ÿ", "cät", "zebra"],  # characters not in char.dic
    ["潮水", "ran", "unicorn", "日本語"],  # words not in word.dic
    ["好"],  # one token
]


def lexicons():
    """The vocabularies as biLM.py builds them: special words first, then the corpus."""
    words = {}
    for special in ["<oov>", "<bos>", "<eos>", "<pad>"]:
        words[special] = len(words)
    chars = {}
    for line in TRAINING_TEXT:
        for word in line.split():
            words.setdefault(word, len(words))
            for char in word:
                chars.setdefault(char, len(chars))
    chars.setdefault(" ", len(chars))  # a word with a space (as in Vietnamese): its line is only an id
    for special in ["<bos>", "<eos>", "<oov>", "<pad>", "<bow>", "<eow>"]:
        chars.setdefault(special, len(chars))
    return chars, words


def main(out: Path) -> None:
    torch.manual_seed(0)
    out.mkdir(parents=True, exist_ok=True)
    chars, words = lexicons()
    config_name = "tiny_cnn_5_6_8_16.json"
    (out / config_name).write_text(json.dumps(ARCHITECTURE, indent=1), encoding="utf-8")
    arguments = {"seed": 1, "gpu": -1, "config_path": config_name, "model": "tiny.model", "batch_size": 32}
    (out / "config.json").write_text(json.dumps(arguments), encoding="utf-8")
    for name, lexicon in (("char.dic", chars), ("word.dic", words)):
        lines = "".join(f"{token}\t{i}\n" for token, i in lexicon.items())
        (out / name).write_text(lines, encoding="utf-8")
    char_layer = EmbeddingLayer(ARCHITECTURE["token_embedder"]["char_dim"], chars, fix_emb=False)
    word_layer = EmbeddingLayer(ARCHITECTURE["token_embedder"]["word_dim"], words, fix_emb=False)
    model = Model(ARCHITECTURE, word_layer, char_layer)
    with torch.no_grad():  # larger weights than the initialisation, so that clipping and gates matter
        for name, parameter in model.named_parameters():
            if "embedding" not in name:
                parameter.normal_(0.0, 0.6)
    legacy = {"_use_new_zipfile_serialization": False}
    torch.save(model.token_embedder.state_dict(), out / "token_embedder.pkl", **legacy)
    torch.save(model.encoder.state_dict(), out / "encoder.pkl", **legacy)
    outputs = Embedder(str(out)).sents2elmo(SENTENCES, output_layer=-2)
    arrays = {f"sentence_{i}": np.asarray(array, dtype=np.float32) for i, array in enumerate(outputs)}
    np.savez_compressed(out / "reference.npz", **arrays)
    (out / "sentences.json").write_text(json.dumps(SENTENCES, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
