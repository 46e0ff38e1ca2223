"""`elmo_coref`: the thinc word-level coreference component, on spaCy 3.8 without
spacy-experimental: it learns hand-made chains, saves and loads, handles empty, unsegmented,
chainless, nested and 20,000-word docs, and listens to `elmo`."""
import configparser
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import fix_random_seed
from thinc.api import Linear

from spacy_elmo.coref.component import ElmoCoref, gold_mentions, spans_to_clusters
from spacy_elmo.coref.model import NEG_INF, build_word_coref_v1, distance_buckets, score_antecedents
from spacy_elmo.errors import SpacyElmoError
from spacy_elmo.registry_names import WORD_COREF

from ..training_loop import loss_history

REPO = Path(__file__).resolve().parents[2]
TINY_TOK2VEC = {
    "@architectures": "spacy.HashEmbedCNN.v2", "width": 32, "depth": 1, "embed_size": 500,
    "window_size": 1, "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None,
}
TINY = {"@architectures": WORD_COREF, "hidden_size": 32, "fine_width": 32, "span_hidden_size": 32, "dropout": 0.0, "tok2vec": TINY_TOK2VEC}


def clusters(doc):
    return {key: [(s.start, s.end) for s in group] for key, group in doc.spans.items() if key.startswith("coref_clusters_")}


def gold_doc(vocab, words, chains, heads=None):
    doc = Doc(vocab, words=words)
    for number, chain in enumerate(chains, 1):
        doc.spans[f"coref_clusters_{number}"] = [doc[s:e] for s, e in chain]
        if heads is not None:
            doc.spans[f"coref_head_clusters_{number}"] = [doc[h : h + 1] for h in heads[number - 1]]
    return doc


def example(doc):
    return Example(Doc(doc.vocab, words=[t.text for t in doc]), doc)


def blank(model=None, sentencizer=True):
    nlp = spacy.blank("en")
    if sentencizer:
        nlp.add_pipe("sentencizer")
    nlp.add_pipe("elmo_coref", config={"model": model or TINY})
    return nlp


def train(nlp, examples, steps=100):
    fix_random_seed(0)
    return loss_history(nlp, examples, "elmo_coref", steps)


def hand_made(vocab):
    return [
        gold_doc(vocab, "John Smith said that he would come . The old man likes his dog .".split(), [[(0, 2), (4, 5)], [(8, 11), (12, 13)]]),
        # nested mentions: "The father of Anna" contains "Anna" (heads given: the last word is
        # "Anna" for both, so the fallback would merge the chains)
        gold_doc(
            vocab, "The father of Anna said she and he are happy . He loves her .".split(),
            [[(0, 4), (7, 8), (11, 12)], [(3, 4), (5, 6), (13, 14)]], heads=[[1, 7, 11], [3, 5, 13]],
        ),
        # no chains at all (every word links to ε)
        gold_doc(vocab, "It rained all day .".split(), []),
    ]


@pytest.fixture(scope="module")
def trained():
    nlp = blank()
    docs = hand_made(nlp.vocab)
    history = train(nlp, [example(d) for d in docs], steps=120)
    return nlp, docs, history


def test_it_learns_the_chains_of_hand_made_docs_with_nested_mentions_and_none(trained):
    nlp, docs, history = trained
    assert history[-1] < 0.1 * history[0]
    for gold in docs:
        assert clusters(nlp(gold.text)) == clusters(gold)
    scores = nlp.evaluate([example(d) for d in docs])
    assert scores["coref_conll_f"] == pytest.approx(1.0) and scores["coref_lea_f"] == pytest.approx(1.0)


def test_saving_and_loading_gives_the_same_clusters(trained, tmp_path):
    nlp, docs, _ = trained
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.pipe_names == ["sentencizer", "elmo_coref"]
    predicted = [clusters(nlp(gold.text)) for gold in docs]
    assert [clusters(loaded(gold.text)) for gold in docs] == predicted and predicted[0]


def test_empty_and_unsegmented_docs(trained):
    nlp, docs, _ = trained
    assert clusters(nlp("")) == {}
    assert [clusters(d) for d in nlp.pipe(["", docs[0].text])][1] == clusters(docs[0])
    coref = nlp.get_pipe("elmo_coref")
    unsegmented = Doc(nlp.vocab, words=[t.text for t in docs[0]])
    assert not unsegmented.has_annotation("SENT_START")
    found = clusters(coref(unsegmented))  # one sentence: spans may cross the '.'
    assert found and all(0 <= s < e <= len(unsegmented) for group in found.values() for s, e in group)


def test_gold_heads_come_from_head_groups_else_the_last_word_and_bad_heads_are_counted():
    vocab = spacy.blank("en").vocab
    words = "the big dog saw a cat and it ran".split()
    with_heads = gold_doc(vocab, words, [[(0, 3), (7, 8)]], heads=[[2, 7]])
    assert gold_mentions(example(with_heads), "coref_clusters", "coref_head_clusters") == ([[(2, 0, 3), (7, 7, 8)]], 0)
    without = gold_doc(vocab, words, [[(0, 2), (7, 8)]])
    assert gold_mentions(example(without), "coref_clusters", "coref_head_clusters") == ([[(1, 0, 2), (7, 7, 8)]], 0)
    bad = gold_doc(vocab, words, [[(0, 3), (4, 6), (7, 8)]], heads=[[2, 8, 7]])  # head 8 is outside "a cat"
    assert gold_mentions(example(bad), "coref_clusters", "coref_head_clusters") == ([[(2, 0, 3), (7, 7, 8)]], 1)


def test_gold_mentions_follow_a_different_tokenization_and_unalignable_ones_are_counted():
    vocab = spacy.blank("en").vocab
    gold = gold_doc(vocab, ["John", "did", "n't", "say", "it", ".", "He", "left", "it"], [[(0, 1), (6, 7)], [(4, 5), (8, 9)]])
    predicted = Doc(vocab, words=["John", "didn't", "say", "it", ".", "He", "left", "it"])
    assert gold_mentions(Example(predicted, gold), "coref_clusters", "coref_head_clusters") == ([[(0, 0, 1), (5, 5, 6)], [(3, 3, 4), (7, 7, 8)]], 0)
    gold = gold_doc(vocab, ["John", "did", "n't", "go", "."], [[(0, 1), (1, 2)]])  # "did" is half a token
    predicted = Doc(vocab, words=["John", "didn't", "go", "."])
    assert gold_mentions(Example(predicted, gold), "coref_clusters", "coref_head_clusters") == ([], 1)


def test_initialize_needs_some_gold_chains():
    nlp = blank()
    with pytest.raises(SpacyElmoError, match="no training example has 'coref_clusters_N'"):
        nlp.initialize(lambda: [example(gold_doc(nlp.vocab, "It rained .".split(), []))])


def test_a_20000_word_doc_runs_in_memory_linear_in_its_length():
    nlp = blank(sentencizer=False)
    vocab = nlp.vocab
    nlp.initialize(lambda: [example(hand_made(vocab)[0])])
    coref = nlp.get_pipe("elmo_coref")
    rng = numpy.random.default_rng(0)
    words = [str(w) for w in rng.choice(["the", "man", "he", "said", "it", "a", "dog", ".", "her", "Anna"], 20000)]
    doc = Doc(vocab, words=words)
    h = coref.model.predict([doc])[0]
    tracemalloc.start()
    scores, _ = score_antecedents(coref.model, h, is_train=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert scores.scores.shape == (20000, 51) and scores.candidates.shape == (20000, 50)
    assert (scores.candidates < numpy.arange(20000)[:, None])[scores.valid].all()
    assert (numpy.arange(20000)[:, None] - scores.candidates)[scores.valid].max() <= 1024
    assert peak < 400 * 2**20  # an n×n float32 matrix alone would be 1.6 GB
    coref(doc)  # the whole component, spans included


def tiny_scorer(width=16, antecedent_limit=6, seed=0):
    fix_random_seed(seed)
    tok2vec = Linear(nO=width, nI=4)
    model = build_word_coref_v1(
        tok2vec, fine_width=8, hidden_size=12, dropout=0.0, antecedent_limit=antecedent_limit, antecedent_window=10, block_size=7
    )
    tok2vec.initialize()
    model.initialize()
    return model


def test_the_fine_scorer_is_its_layers_on_the_concatenated_pair():
    model = tiny_scorer()
    h = numpy.random.default_rng(0).normal(size=(30, 16)).astype("f")
    scores, _ = score_antecedents(model, h, is_train=False)
    i, c = numpy.nonzero(scores.valid)
    j = scores.candidates[i, c]
    g = model.get_ref("fine_proj").predict(h)
    A = model.get_ref("coarse").predict(h)
    pairs = numpy.concatenate([g[i], g[j], g[i] * g[j], model.get_param("dist_E")[distance_buckets(i - j)]], axis=1)
    expected = (A[i] * h[j]).sum(axis=1) + model.get_ref("fine").predict(pairs)[:, 0]
    numpy.testing.assert_allclose(scores.scores[i, c + 1], expected, rtol=1e-5, atol=1e-5)
    assert (scores.scores[:, 1:][~scores.valid] == NEG_INF).all()


def test_the_antecedent_gradients_match_finite_differences():
    model = tiny_scorer(antecedent_limit=10)  # all of the window: the candidates do not move
    rng = numpy.random.default_rng(1)
    h = rng.normal(size=(25, 16)).astype("f")
    pair_weights = rng.normal(size=(25, 25)).astype("f")  # the loss weighs each (word, candidate) pair

    def weights_of(scores):
        weights = numpy.zeros(scores.scores.shape, dtype="f")
        weights[:, 1:] = numpy.take_along_axis(pair_weights, scores.candidates, axis=1) * scores.valid
        return weights

    def loss(h_value):
        scores = score_antecedents(model, h_value, is_train=False)[0]
        return float((scores.scores.astype("d") * weights_of(scores)).sum())

    scores, backprop = score_antecedents(model, h, is_train=True)
    dh = backprop(weights_of(scores))
    first = model.get_ref("fine").layers[0]
    dW = first.get_grad("W").copy()

    eps = 1e-3
    for row, col in [(3, 2), (10, 0), (24, 15), (17, 7)]:
        step = numpy.zeros_like(h)
        step[row, col] = eps
        assert (loss(h + step) - loss(h - step)) / (2 * eps) == pytest.approx(dh[row, col], rel=1e-2, abs=5e-3)
    W = first.get_param("W")
    for row, col in [(0, 0), (5, 9), (11, 20), (7, 25)]:  # g_i, g_j, g_i*g_j and distance columns
        original = W[row, col]
        values = []
        for delta in (eps, -eps):
            W[row, col] = original + delta
            values.append(loss(h))
        W[row, col] = original
        assert (values[0] - values[1]) / (2 * eps) == pytest.approx(dW[row, col], rel=1e-2, abs=5e-3)


def test_distance_buckets():
    assert distance_buckets(numpy.asarray([1, 2, 4, 5, 8, 15, 16, 64, 1000])).tolist() == [0, 1, 3, 4, 5, 5, 6, 8, 8]


def test_spans_to_clusters_drops_repeated_spans_and_orders_by_first_mention():
    assert spans_to_clusters([[(5, 6), (9, 10)], [(0, 1), (3, 4), (3, 4)], [(3, 4), (7, 8)]]) == [[(0, 1), (3, 4)], [(5, 6), (9, 10)]]


def test_missing_upstream_elmo_is_one_line():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_coref")  # the default model listens to "elmo"
    with pytest.raises(SpacyElmoError) as info:
        nlp.initialize(lambda: [example(hand_made(nlp.vocab)[0])])
    message = str(info.value)
    assert "\n" not in message and "listens to an elmo component 'elmo'" in message


def test_it_listens_to_the_bundled_elmo_and_learns():
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("elmo", config={"store": "all"})
    listener = {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {"@architectures": "spacy-elmo.ElmoListener.v1", "width": 32, "upstream": "elmo"},
        "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 32, "window_size": 1, "maxout_pieces": 2, "depth": 1},
    }
    nlp.add_pipe("elmo_coref", config={"model": dict(TINY, tok2vec=listener)})
    assert nlp.get_pipe("elmo").listening_components == ["elmo_coref"]
    docs = hand_made(nlp.vocab)[:1]
    history = train(nlp, [example(d) for d in docs], steps=60)
    assert history[-1] < 0.2 * history[0]
    assert clusters(nlp(docs[0].text)) == clusters(docs[0])


def test_it_trains_beside_an_elmo_sourced_and_left_uninitialized(tmp_path):
    """As `spacy train` does with sourced components (configs/elmo_coref_web.cfg): the pipeline's
    elmo is disabled while elmo_coref initializes, and is not initialized again."""
    base = spacy.blank("en")
    base.add_pipe("sentencizer")
    base.add_pipe("elmo", config={"store": "all"})
    base.initialize()
    base.to_disk(tmp_path / "base")
    source = spacy.load(tmp_path / "base")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("elmo", source=source)
    listener = {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {"@architectures": "spacy-elmo.ElmoListener.v1", "width": 32, "upstream": "elmo"},
        "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 32, "window_size": 1, "maxout_pieces": 2, "depth": 1},
    }
    nlp.add_pipe("elmo_coref", config={"model": dict(TINY, tok2vec=listener)})
    docs = hand_made(nlp.vocab)[:1]
    with nlp.select_pipes(disable=["elmo"]):
        nlp.initialize(lambda: [example(d) for d in docs])
    fix_random_seed(0)
    optimizer = nlp.resume_training()
    for _ in range(3):
        losses = nlp.update([example(d) for d in docs], sgd=optimizer)
    assert losses["elmo_coref"] > 0
    assert all(not node.initializing for node in nlp.get_pipe("elmo_coref").model.walk() if hasattr(node, "initializing"))


def test_the_component_runs_without_torch(tmp_path):
    script = f"""
import sys
sys.modules["torch"] = None  # any torch import fails
import spacy
from spacy.tokens import Doc
from spacy.training import Example
nlp = spacy.blank("en")
nlp.add_pipe("elmo_coref", config={{"model": {TINY!r}}})
doc = Doc(nlp.vocab, words="John said he left .".split())
doc.spans["coref_clusters_1"] = [doc[0:1], doc[2:3]]
optimizer = nlp.initialize(lambda: [Example(Doc(nlp.vocab, words=[t.text for t in doc]), doc)])
nlp.update([Example(Doc(nlp.vocab, words=[t.text for t in doc]), doc)], sgd=optimizer)
nlp("Mary came .")
assert "scorch" not in sys.modules and "udapi" not in sys.modules
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]


def test_entry_points_name_the_factory_and_the_architecture():
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    entry_points = parser["options.entry_points"]
    assert "elmo_coref = spacy_elmo.coref.component:make_elmo_coref" in entry_points["spacy_factories"]
    assert f"{WORD_COREF} = spacy_elmo.coref.model:build_word_coref_v1" in entry_points["spacy_architectures"]
    assert "scorch>=0.2" in parser["options.extras_require"]["test"]
    assert isinstance(spacy.blank("en").add_pipe("elmo_coref", config={"model": TINY}), ElmoCoref)


@pytest.mark.parametrize("name", ["elmo_coref.cfg", "elmo_coref_cnn.cfg"])
def test_the_configs_build(name):
    config = spacy.util.load_config(REPO / "configs" / name, overrides={"paths.train": "train.spacy", "paths.dev": "dev.spacy"})
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    assert nlp.pipe_names == (["sentencizer", "elmo", "elmo_coref"] if name == "elmo_coref.cfg" else ["sentencizer", "elmo_coref"])


def test_lea_of_a_known_example():
    from spacy_elmo.coref.scoring import lea_scores

    vocab = spacy.blank("en").vocab
    words = [f"w{i}" for i in range(6)]
    a, b, c, d, e = (0, 1), (1, 2), (2, 3), (3, 4), (4, 5)
    # key {a b c} {d e}, response {a b} {c d e}: R = (3·1/3 + 2·1) / 5, P = (2·1 + 3·1/3) / 5
    scores = lea_scores([gold_doc(vocab, words, [[a, b, c], [d, e]])], [gold_doc(vocab, words, [[a, b], [c, d, e]])])
    assert scores["coref_lea_r"] == pytest.approx(0.6) and scores["coref_lea_p"] == pytest.approx(0.6)
    assert lea_scores([gold_doc(vocab, words, [[a, b]])], [gold_doc(vocab, words, [])])["coref_lea_f"] == 0.0


def test_scoring_without_scorch_names_the_extra(trained, monkeypatch):
    nlp, docs, _ = trained
    monkeypatch.setitem(sys.modules, "scorch", None)  # any import of scorch fails
    with pytest.raises(SpacyElmoError, match=r"needs scorch .*pip install 'spacy-elmo\[scoring\]'"):
        nlp.evaluate([example(docs[0])])
