"""The training loop the tests share: initialize a pipeline, update it, keep a component's losses."""
from typing import List, Sequence

from spacy.language import Language
from spacy.training import Example


def loss_history(nlp: Language, examples: Sequence[Example], component: str, steps: int) -> List[float]:
    """Initialize `nlp` on `examples`, update it on all of them `steps` times and return the loss
    of `component` after each update."""
    optimizer = nlp.initialize(lambda: examples)
    history = []
    for _ in range(steps):
        losses: dict = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        history.append(losses[component])
    return history
