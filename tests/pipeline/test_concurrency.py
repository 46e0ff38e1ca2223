"""Concurrent use: `nlp(text)` from several threads gives each doc what a sequential run gives."""
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import spacy


def _texts(n: int, seed: int = 0) -> list:
    """Sentences of mostly distinct made-up words, so that concurrent calls miss the token cache."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(4000)]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 25))) + "." for _ in range(n)]


def _pipeline() -> spacy.language.Language:
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    return nlp


def test_threads_give_sequential_vectors():
    texts = _texts(120)
    expected = [doc._.elmo for doc in _pipeline().pipe(texts)]
    nlp = _pipeline()
    nlp("warm up")
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda text: nlp(text)._.elmo, texts))
    differences = [float(np.abs(a - b).max()) for a, b in zip(expected, got)]
    assert max(differences) <= 1e-5, f"{sum(d > 1e-5 for d in differences)} of {len(texts)} docs differ"


def test_first_use_from_threads_loads_once():
    nlp = _pipeline()
    elmo = nlp.get_pipe("elmo")
    loads = []
    original = elmo.model.init

    def counting_init(model, X=None, Y=None):
        loads.append(threading.get_ident())
        return original(model, X, Y)

    elmo.model.init = counting_init
    texts = _texts(8, seed=1)
    barrier = threading.Barrier(4)

    def run(text):
        barrier.wait()
        return nlp(text)._.elmo

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(run, texts[:4]))
    assert len(loads) == 1
    expected = [doc._.elmo for doc in _pipeline().pipe(texts[:4])]
    assert all(np.abs(a - b).max() <= 1e-5 for a, b in zip(expected, got))


def test_copies_and_pickles_of_a_biLM_embed_the_same():
    import copy
    import pickle

    from spacy_elmo import load_bilm

    bilm = load_bilm()
    sentences = [text.split() for text in _texts(6, seed=2)]
    expected = bilm.embed_sentences(sentences)
    for other in (copy.deepcopy(bilm), pickle.loads(pickle.dumps(bilm))):
        for a, b in zip(expected, other.embed_sentences(sentences)):
            np.testing.assert_array_equal(a, b)
