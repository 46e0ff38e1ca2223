"""Training downstream components on ELMo features: listener, scalar mix, feature cache, fine-tuning."""
import numpy as np
import pytest
import spacy
from spacy.training import Example
from spacy.util import fix_random_seed

from spacy_elmo import learned_mixes

from ..training_loop import loss_history
from .helpers import elmo_config as component_config
from .helpers import model_config

# The bundled model: trained features, for tests that overfit in a few steps.
BUNDLED = ("en_base", None)
TRAIN_DATA = [
    ("I like London and Berlin.", {"entities": [(7, 13, "LOC"), (18, 24, "LOC")]}),
    ("Alice flew to Paris today.", {"entities": [(0, 5, "PER"), (14, 19, "LOC")]}),
    ("Bob met Alice in Rome.", {"entities": [(0, 3, "PER"), (8, 13, "PER"), (17, 21, "LOC")]}),
]


def ner_nlp(files, elmo_config=None, static_embed=False):
    """elmo + ner whose tok2vec is the ELMo listener architecture."""
    tok2vec = {"@architectures": "spacy-elmo.ElmoListener.v1", "width": 32, "upstream": "elmo"}
    if static_embed:
        tok2vec["static_embed"] = {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": 16,
            "attrs": ["NORM", "SHAPE"],
            "rows": [500, 100],
            "include_static_vectors": False,
        }
    ner_model = {
        "@architectures": "spacy.TransitionBasedParser.v2",
        "state_type": "ner",
        "extra_state_tokens": False,
        "hidden_width": 32,
        "maxout_pieces": 2,
        "use_upper": True,
        "nO": None,
        "tok2vec": tok2vec,
    }
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=component_config(files, elmo_config))
    nlp.add_pipe("ner", config={"model": ner_model})
    return nlp


def examples(nlp):
    return [Example.from_dict(nlp.make_doc(text), annotations) for text, annotations in TRAIN_DATA]


def train(nlp, n_steps):
    fix_random_seed(0)
    return loss_history(nlp, examples(nlp), "ner", n_steps)


def test_listener_is_linked_and_gets_the_biLM_sizes(model_files):
    nlp = ner_nlp(model_files)
    elmo = nlp.get_pipe("elmo")
    assert elmo.listening_components == ["ner"]
    nlp.initialize(lambda: examples(nlp))
    (listener,) = elmo.listeners
    assert listener.get_dim("nO") == 32 and listener.get_dim("n_layers") == 3


def test_ner_overfits_and_predicts_the_same_after_save_and_load(tmp_path):
    nlp = ner_nlp(BUNDLED, static_embed=True)  # trained features: a random biLM's learn too slowly
    history = train(nlp, 60)
    assert history[-1] < 0.05 < history[0]
    expected = [[(e.text, e.label_) for e in doc.ents] for doc in nlp.pipe(t for t, _ in TRAIN_DATA)]
    gold = [[(text[s:e], label) for s, e, label in ann["entities"]] for text, ann in TRAIN_DATA]
    assert expected == gold
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert [[(e.text, e.label_) for e in doc.ents] for doc in loaded.pipe(t for t, _ in TRAIN_DATA)] == gold


@pytest.mark.parametrize("how", ["exclude", "disable"])
def test_a_listener_without_its_elmo_refuses_instead_of_predicting_from_zeros(model_files, tmp_path, how):
    nlp = ner_nlp(model_files)
    train(nlp, 2)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline", **{how: ["elmo"]})
    message = "not in the pipeline before it" if how == "exclude" else "of 'ner': the 'elmo' component did not annotate"
    with pytest.raises(ValueError, match=message):
        loaded("A cat sat.")
    assert spacy.load(tmp_path / "pipeline", **{how: ["elmo", "ner"]})("A cat sat.").ents == ()


def test_each_component_learns_its_own_layer_mix(model_files):
    nlp = ner_nlp(model_files)
    train(nlp, 5)
    mixes = [node for node in nlp.get_pipe("ner").model.walk() if node.name == "elmo_scalar_mix"]
    assert len(mixes) == 1
    weights = mixes[0].get_param("W")
    assert weights.shape == (3,) and not np.allclose(weights, 0.0)
    gamma = float(mixes[0].get_param("gamma")[0])
    assert gamma != 1.0
    learned = learned_mixes(nlp)
    assert list(learned) == ["ner"]
    expected = np.exp(weights) / np.exp(weights).sum()
    np.testing.assert_allclose(learned["ner"]["weights"], expected, rtol=1e-5)
    assert learned["ner"]["gamma"] == pytest.approx(gamma)
    np.testing.assert_allclose(learned["ner"]["coefficients"], gamma * expected, rtol=1e-5)


def test_feature_cache_runs_a_frozen_biLM_once_per_sentence(model_files):
    cached = ner_nlp(model_files)
    uncached = ner_nlp(model_files, elmo_config={"feature_cache_mb": 0})
    cached_losses, uncached_losses = train(cached, 4), train(uncached, 4)
    assert cached_losses == uncached_losses
    cache = cached.get_pipe("elmo").feature_cache
    assert (cache.misses, cache.hits, len(cache)) == (3, 9, 3)
    assert len(uncached.get_pipe("elmo").feature_cache) == 0


def test_fine_tuning_updates_the_biLM(model_files):
    nlp = ner_nlp(model_files, elmo_config={"frozen": False})
    train_examples = examples(nlp)
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: train_examples)
    bilm = nlp.get_pipe("elmo").bilm
    before = {name: p.detach().clone() for name, p in bilm.named_parameters()}
    losses = {}
    for _ in range(3):  # the parser's output layer starts at zero: no gradient reaches tok2vec in step 1
        nlp.update(train_examples, sgd=optimizer, losses=losses)
    changed = [name for name, p in bilm.named_parameters() if not np.allclose(p.detach(), before[name])]
    assert changed and losses["elmo"] > 0.0
    frozen = ner_nlp(model_files)
    frozen_optimizer = frozen.initialize(lambda: examples(frozen))
    frozen_before = [p.detach().clone() for p in frozen.get_pipe("elmo").bilm.parameters()]
    for _ in range(3):
        frozen.update(examples(frozen), sgd=frozen_optimizer)
    assert all(np.array_equal(a, p.detach()) for a, p in zip(frozen_before, frozen.get_pipe("elmo").bilm.parameters()))


@pytest.mark.parametrize("frozen", [True, False])
def test_replace_listeners_gives_the_component_its_own_biLM(model_files, tmp_path, frozen):
    from spacy_elmo.layers.elmo_model import get_bilm

    nlp = ner_nlp(model_files, static_embed=True, elmo_config={"frozen": frozen})
    train(nlp, 20)
    texts = [text for text, _ in TRAIN_DATA]

    def outputs(pipeline):
        docs = list(pipeline.pipe(texts))
        vectors = pipeline.get_pipe("ner").model.get_ref("tok2vec").predict(docs)
        return [[(e.text, e.label_) for e in doc.ents] for doc in docs], vectors

    ents, vectors = outputs(nlp)
    nlp.replace_listeners("elmo", "ner", ["model.tok2vec"])
    assert nlp.get_pipe("elmo").listening_components == []
    embed = nlp.config["components"]["ner"]["model"]["tok2vec"]
    assert embed["@architectures"] == "spacy-elmo.ElmoEmbed.v1" and embed["frozen_elmo"] is frozen
    assert embed["elmo"]["@architectures"] == "spacy-elmo.ElmoModel.v2" and "upstream" not in embed
    nlp.remove_pipe("elmo")
    replaced_ents, replaced_vectors = outputs(nlp)
    assert replaced_ents == ents
    for a, b in zip(vectors, replaced_vectors):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    loaded_ents, loaded_vectors = outputs(loaded)
    assert loaded_ents == ents
    for a, b in zip(vectors, loaded_vectors):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    (model,) = [node for node in loaded.get_pipe("ner").model.walk() if node.name == "elmo_model"]
    before = [p.detach().clone() for p in get_bilm(model).parameters()]
    optimizer = loaded.resume_training()
    for _ in range(2):
        loaded.update(examples(loaded), sgd=optimizer)
    unchanged = all(np.array_equal(a, p.detach()) for a, p in zip(before, get_bilm(model).parameters()))
    assert unchanged is frozen


def test_selected_only_storage_cannot_feed_a_listener(model_files):
    with pytest.raises(ValueError, match='store = "all"'):
        ner_nlp(model_files, elmo_config={"store": "selected"})


def listener_tok2vec(width=16):
    return {"@architectures": "spacy-elmo.ElmoListener.v1", "width": width, "upstream": "*"}


def test_several_components_listen_each_with_its_own_mix():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=model_config(BUNDLED))
    nlp.add_pipe("tagger", config={"model": {"@architectures": "spacy.Tagger.v2", "nO": None, "tok2vec": listener_tok2vec()}})
    textcat_model = {"@architectures": "spacy.TextCatCNN.v2", "exclusive_classes": True, "nO": None, "tok2vec": listener_tok2vec()}
    nlp.add_pipe("textcat", config={"model": textcat_model})
    spancat_model = {
        "@architectures": "spacy.SpanCategorizer.v1",
        "tok2vec": listener_tok2vec(),
        "reducer": {"@layers": "spacy.mean_max_reducer.v1", "hidden_size": 16},
        "scorer": {"@layers": "spacy.LinearLogistic.v1", "nO": None, "nI": None},
    }
    nlp.add_pipe("spancat", config={"model": spancat_model, "spans_key": "sc"})
    assert sorted(nlp.get_pipe("elmo").listening_components) == ["spancat", "tagger", "textcat"]
    train_examples = []
    for i, (text, annotations) in enumerate(TRAIN_DATA):
        doc = nlp.make_doc(text)
        spans = [(s, e, label) for s, e, label in annotations["entities"]]
        train_examples.append(Example.from_dict(doc, {
            "tags": ["X" if t.is_title else "O" for t in doc],
            "cats": {"A": float(i % 2 == 0), "B": float(i % 2 == 1)},
            "spans": {"sc": spans},
        }))  # fmt: skip
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: train_examples)
    optimizer.learn_rate = 0.01
    for _ in range(50):
        losses = {}
        nlp.update(train_examples, sgd=optimizer, losses=losses)
    assert losses["tagger"] < 0.5 and losses["textcat"] < 0.05 and losses["spancat"] < 0.05
    doc = nlp(TRAIN_DATA[0][0])
    assert [t.tag_ for t in doc] == ["X", "O", "X", "O", "X", "O"]
    assert doc.cats["A"] > doc.cats["B"]
    mixes = [[n for n in nlp.get_pipe(name).model.walk() if n.name == "elmo_scalar_mix"] for name in ("tagger", "textcat", "spancat")]
    weights = [mix.get_param("W") for (mix,) in mixes]
    assert not np.allclose(weights[0], weights[1]) and not np.allclose(weights[1], weights[2])


def test_fine_tuning_sums_the_gradients_of_all_listeners(model_files):
    from spacy_elmo.layers.listener import ElmoListener

    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config={**model_config(model_files), "frozen": False})
    nlp.initialize()
    first, second = ElmoListener("elmo"), ElmoListener("elmo")
    elmo.add_listener(first, "a")
    elmo.add_listener(second, "b")
    doc = nlp.make_doc("Alice met Bob .")
    rng = np.random.default_rng(0)
    d_first, d_second = (rng.normal(size=(3, 4, 32)).astype(np.float32) for _ in range(2))

    def bilm_grads(d_a, d_b):
        elmo.bilm.zero_grad()
        elmo.update([Example(doc, doc)])
        first._backprop([d_a])
        second._backprop([d_b])
        return np.concatenate([p.grad.flatten().numpy() for p in elmo.bilm.parameters() if p.grad is not None])

    both = bilm_grads(d_first, d_second)
    np.testing.assert_allclose(both, bilm_grads(np.zeros_like(d_first), d_first + d_second), rtol=1e-4, atol=1e-6)
    assert not np.allclose(both, bilm_grads(np.zeros_like(d_first), d_second), rtol=1e-3, atol=1e-5)


def test_update_drops_out_the_layers_it_hands_over_and_validates_examples(model_files):
    from spacy_elmo.layers.listener import ElmoListener

    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config=model_config(model_files))
    nlp.initialize()
    listener = ElmoListener("elmo")
    elmo.add_listener(listener, "a")
    doc = nlp.make_doc("Alice met Bob in Paris .")
    elmo.update([Example(doc, doc)], drop=0.0)
    (plain,) = listener._outputs
    elmo.update([Example(doc, doc)], drop=0.5)
    (dropped,) = listener._outputs
    kept = dropped != 0
    assert 0.3 < kept.mean() < 0.7
    np.testing.assert_allclose(dropped[kept], 2.0 * plain[kept], rtol=1e-6)
    with pytest.raises(TypeError, match="Elmo.update"):
        elmo.update([doc])


def test_listener_lets_go_of_the_batch_once_used(model_files):
    nlp = ner_nlp(model_files)
    train(nlp, 1)
    (listener,) = nlp.get_pipe("elmo").listeners
    assert listener._outputs is None and listener._backprop is None and listener._batch_id is None
