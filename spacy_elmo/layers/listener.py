"""The listener: a downstream component's view of the `elmo` component's output (all layers)."""
from typing import Callable, List, Optional, Sequence, Tuple

from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats3d

from ..attributes import ATTR
from ..errors import SpacyElmoError
from .no_backprop import no_backprop


class ElmoListener(Model):
    """Gets all biLM layers per doc from an upstream `elmo` component.

    In training, the upstream component hands over the batch it computed (`receive`) and
    takes the gradients back; the listener lets go of both once it has used them; otherwise the
    listener reads `doc._.elmo`. Docs the upstream has not annotated get zeros of the right shape
    only while the upstream is being initialized (`nlp.initialize`); elsewhere they are an error,
    as the component would predict from nothing (an upstream excluded, disabled or after it).
    Dims: `nO` (layer width) and `n_layers`, set by the upstream once its weights are loaded.

    upstream_name (str): name of the `elmo` component, or "*" for any.
    """

    name = "elmo-listener"

    def __init__(self, upstream_name: str) -> None:
        Model.__init__(self, name=self.name, forward=forward, dims={"nO": None, "n_layers": None})
        self.upstream_name = upstream_name
        self._batch_id: Optional[int] = None
        self._outputs: Optional[List[Floats3d]] = None
        self._backprop: Optional[Callable] = None
        # Set by the upstream: the name of the component this listener is in, once linked, and
        # whether unannotated docs are expected (from the upstream's initialize to its first run).
        self.component_name: Optional[str] = None
        self.initializing = False

    def set_dim(self, name: str, value: int, *, force: bool = False) -> None:
        """Set a layer size; a known one that changes is one clear error: the listening
        component and the upstream biLM do not belong together."""
        known = self.maybe_get_dim(name)
        if known is not None and value != known and not force:
            raise SpacyElmoError(
                f"elmo listener: the biLM's {name} is {known} on one side and {value} on the other: the listening "
                "component was built for another biLM than its elmo component's (a replaced elmo model, or a "
                "component sourced from a pipeline with another biLM)"
            )
        super().set_dim(name, value, force=force)

    @classmethod
    def get_batch_id(cls, docs: Sequence[Doc]) -> int:
        """A content hash of a batch, to check that a received batch is the one asked for."""
        return sum(sum(token.orth for token in doc) for doc in docs)

    def receive(self, batch_id: int, outputs: List[Floats3d], backprop: Callable) -> None:
        """Store the upstream's outputs for a batch and the callback taking their gradients."""
        self._batch_id = batch_id
        self._outputs = outputs
        self._backprop = backprop

    def release(self) -> None:
        """Forget the received batch and its callback (once used: they can hold a whole graph)."""
        self._batch_id = None
        self._outputs = None
        self._backprop = None

    def verify_inputs(self, docs: Sequence[Doc]) -> None:
        """Check that `docs` are the batch last received."""
        batch_id = self.get_batch_id(docs)
        if batch_id != self._batch_id:
            raise SpacyElmoError(
                f"elmo listener: got a batch (id {batch_id}) other than the one the upstream 'elmo' "
                f"component computed (id {self._batch_id}); no component between them may change the tokens"
            )


def forward(model: ElmoListener, docs: List[Doc], is_train: bool) -> Tuple[List[Floats3d], Callable]:
    """Supply the upstream outputs: received ones in training, else `doc._.elmo`."""
    if is_train and model._batch_id is not None:
        model.verify_inputs(docs)
        outputs, backprop = model._outputs, model._backprop
        model.release()
        return [model.ops.asarray3f(x) for x in outputs], backprop  # type: ignore
    outputs = []
    for doc in docs:
        stored = doc._.get(ATTR) if Doc.has_extension(ATTR) else None
        if stored is None:
            if not is_train and not model.initializing:
                raise SpacyElmoError(_unfed(model))
            if is_train:
                raise SpacyElmoError(
                    "elmo listener: no ELMo features for a training batch. The upstream 'elmo' component "
                    "did not run in `update`: if it is in [training] frozen_components, also list it in "
                    "[training] annotating_components (or leave it out of frozen_components: it is frozen "
                    "by its own `frozen` setting)"
                )
            n_layers, width = _dims(model)
            outputs.append(model.ops.alloc3f(n_layers, len(doc), width))
        elif stored.ndim != 3:
            raise SpacyElmoError(
                "elmo listener: doc._.elmo holds only the selected representation; set store = \"all\" "
                "on the 'elmo' component so downstream components can mix the layers"
            )
        else:
            outputs.append(model.ops.asarray3f(stored))
    return outputs, no_backprop


def _unfed(model: ElmoListener) -> str:
    """Why a listener outside initialization got a doc without ELMo features, and what to do."""
    upstream = "an elmo component" if model.upstream_name == "*" else f"the '{model.upstream_name}' component"
    if model.component_name is None:
        return (
            f"elmo listener: {upstream} it listens to is not in the pipeline before it (excluded?), so its component "
            "would predict from no features; load the pipeline with it, or exclude its listening components too"
        )
    return (
        f"elmo listener of '{model.component_name}': {upstream} did not annotate the doc (disabled?), so "
        f"'{model.component_name}' would predict from no features; enable it, or disable '{model.component_name}' too"
    )


def _dims(model: ElmoListener) -> Tuple[int, int]:
    n_layers, width = model.maybe_get_dim("n_layers"), model.maybe_get_dim("nO")
    if n_layers is None or width is None:
        raise SpacyElmoError(
            "elmo listener: the layer sizes are unknown because the upstream 'elmo' component has not "
            "loaded its weights; initialize it first (`nlp.initialize()`), and do not list it in "
            "[training] frozen_components unless it is sourced from a trained pipeline"
        )
    return n_layers, width

