"""Starting a pretraining run, or resuming one, in one process or under torchrun.

``run.json`` in the output folder records what a run trains on and how (files, settings,
corpus counts, number of processes) so that `resume` can continue it; ``vocab.txt`` is the
softmax vocabulary.
"""

import json
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from ..bilm import BiLM, BiLMArchitecture, load_bilm
from ..bilm.loading import resolve_model_path
from ..bilm.vocab_file import VOCAB_FILE
from ..errors import SpacyElmoError
from .checkpoint import latest_checkpoint, read_checkpoint
from .corpus import CorpusStats, TextCorpus, make_tokenizer
from .ddp import Processes, broadcast, start_processes, stop_processes
from .errors import CorpusError, TrainingSetupError
from .settings import RESUMABLE, TrainingSettings
from .trainer import CHECKPOINT_DIR, PretrainResult, Trainer
from .vocab import SoftmaxVocab

RUN_FILE = "run.json"


def pretrain(
    output_dir: Path,
    train_paths: Sequence[Path],
    architecture: Optional[Dict[str, Any]] = None,
    settings: Optional[TrainingSettings] = None,
    init: Optional[Path] = None,
    init_options: Optional[Path] = None,
    vocab_path: Optional[Path] = None,
    heldout_path: Optional[Path] = None,
    export: bool = False,
    device: str = "auto",
    show_progress: bool = True,
) -> PretrainResult:
    """Train a biLM from raw text into `output_dir` (which must not hold a run yet).

    architecture (Optional[Dict]): the biLM's architecture (original options.json schema); not
        with `init`.
    init (Optional[Path]): a bundled model's name, a native model folder or original hdf5 weights
        to fine-tune.
    init_options (Optional[Path]): the options.json of original hdf5 weights.
    vocab_path (Optional[Path]): a softmax vocabulary file instead of one built from the text.
    export (bool): also write the model in the original format (options.json + hdf5).
    """
    settings = settings or TrainingSettings()
    output_dir = Path(output_dir)
    if (architecture is None) == (init is None):
        raise TrainingSetupError(
            "give exactly one of: an architecture (a preset) or a model to fine-tune (--init)"
        )
    processes = start_processes(device)
    try:
        spec = {
            "train": [str(Path(p).resolve()) for p in train_paths],
            "heldout": str(Path(heldout_path).resolve()) if heldout_path else None,
            "init": str(resolve_model_path(init).resolve()) if init else None,
            "settings": settings.to_dict(),
            "world_size": processes.world_size,
        }
        corpus = _train_corpus(spec, settings, processes)
        prepared = _main_only(
            processes,
            lambda: _prepare_fresh(output_dir, spec, corpus, architecture, settings, init, init_options, vocab_path),
        )
        shared = broadcast(
            (prepared[0].config.to_options_json(), prepared[0].vocab, prepared[1]) if prepared else None, processes
        )
        heldout = None
        if prepared is not None:
            bilm, stats, heldout = prepared
        else:  # DistributedDataParallel copies the main process's weights into this model
            bilm = BiLM(BiLMArchitecture.from_options_json(shared[0]))
            bilm.set_softmax(shared[1])
            stats = shared[2]
        trainer = Trainer(output_dir, bilm, corpus, settings, processes, show_progress, heldout, stats)
        try:
            return trainer.train(export)
        finally:
            trainer.release()
    finally:
        stop_processes(processes)


def resume(
    output_dir: Path,
    overrides: Optional[Dict[str, Any]] = None,
    export: bool = False,
    device: str = "auto",
    show_progress: bool = True,
) -> PretrainResult:
    """Continue the run in `output_dir` from its newest checkpoint, exactly where it stopped.

    overrides (Optional[Dict]): new values for budgets and intervals (settings.RESUMABLE).
    """
    output_dir = Path(output_dir)
    run_file = output_dir / RUN_FILE
    if not run_file.is_file():
        raise TrainingSetupError(f"{output_dir} holds no training run ({RUN_FILE} not found)")
    spec = json.loads(run_file.read_text(encoding="utf8"))
    fixed = sorted(set(overrides or {}) - set(RESUMABLE))
    if fixed:
        raise TrainingSetupError(f"cannot change {', '.join(fixed)} when resuming; only {', '.join(RESUMABLE)}")
    settings = TrainingSettings.from_dict({**spec["settings"], **(overrides or {})})
    processes = start_processes(device)
    try:
        if processes.world_size != spec["world_size"]:
            raise TrainingSetupError(
                f"the run used {spec['world_size']} processes; resume it with the same number, not {processes.world_size}"
            )
        path = latest_checkpoint(output_dir / CHECKPOINT_DIR)
        if path is None:
            raise TrainingSetupError(
                f"{output_dir} has no checkpoint to resume from; the run stopped before its first one, so start it again in a new folder"
            )
        checkpoint = read_checkpoint(path)
        corpus = _train_corpus(spec, settings, processes)
        stats = CorpusStats.from_dict(spec["corpus"])
        heldout = _main_only(processes, lambda: _read_all(spec["heldout"], settings))
        trainer = Trainer(output_dir, checkpoint.bilm, corpus, settings, processes, show_progress, heldout, stats)
        trainer.restore(checkpoint)
        try:
            return trainer.train(export)
        finally:
            trainer.release()
    finally:
        stop_processes(processes)


def _train_corpus(spec: Dict[str, Any], settings: TrainingSettings, processes: Processes) -> TextCorpus:
    tokenizer = make_tokenizer(settings.lang)
    return TextCorpus(
        [Path(p) for p in spec["train"]],
        tokenizer,
        settings.max_line_chars,
        shard=(processes.rank, processes.world_size),
        seed=settings.seed,
    )


def _read_all(path: Optional[str], settings: TrainingSettings) -> Optional[List[List[str]]]:
    """All sentences of the held-out file, if any (checked like the training files)."""
    if path is None:
        return None
    corpus = TextCorpus([path], make_tokenizer(settings.lang), settings.max_line_chars)
    sentences = list(corpus.texts())
    if not sentences:
        raise CorpusError(f"{path}: no sentence found ({corpus.stats.describe_skips() or 'empty'})")
    return sentences


def _main_only(processes: Processes, work):  # type: ignore[no-untyped-def]
    """Run `work` in the main process only (None elsewhere); raise its setup error in every process."""
    result, error = None, None
    if processes.is_main:
        try:
            result = work()
        except SpacyElmoError as err:
            error = err
    error = broadcast(error, processes)
    if error is not None:
        raise error
    return result


def _prepare_fresh(
    output_dir: Path,
    spec: Dict[str, Any],
    corpus: TextCorpus,
    architecture: Optional[Dict[str, Any]],
    settings: TrainingSettings,
    init: Optional[Path],
    init_options: Optional[Path],
    vocab_path: Optional[Path],
) -> Tuple[BiLM, CorpusStats, Optional[List[List[str]]]]:
    """Check the data, build the model and its vocabulary, write run.json and vocab.txt.

    RETURNS (Tuple): the model, the corpus counts and the held-out sentences (if any).
    """
    if (output_dir / RUN_FILE).exists():
        raise TrainingSetupError(
            f"{output_dir} already holds a training run; continue it with --resume or choose a new folder"
        )
    if init is not None:
        bilm = load_bilm(init, options=init_options)
    else:
        torch.manual_seed(settings.seed)
        bilm = BiLM(BiLMArchitecture.from_options_json(architecture or {}, source="architecture"))
        bilm.reset_parameters()
    if bilm.vocab is not None and vocab_path is not None:
        raise TrainingSetupError(
            f"{init} has its own softmax vocabulary; --vocab applies only to models without one"
        )
    counts: Optional[Counter] = Counter() if bilm.softmax is None else None
    stats = corpus.scan(counts)
    heldout = _read_all(spec["heldout"], settings)
    # The first step reads each row's inputs and, one position later, its last target.
    needed = settings.tokens_per_step(spec["world_size"]) + settings.batch_size * spec["world_size"]
    if settings.epochs is not None and settings.epochs * stats.stream_tokens < needed:
        raise CorpusError(
            f"{settings.epochs} epochs of the text hold {settings.epochs * stats.stream_tokens:,} "
            f"tokens (with sentence markers), less than one batch needs ({needed:,}); use more text or epochs, "
            "or a smaller --batch-size / --unroll-steps"
        )
    if bilm.vocab is not None:
        vocab = SoftmaxVocab(bilm.vocab)
    elif vocab_path is not None:
        vocab = SoftmaxVocab.from_file(vocab_path)
    else:
        vocab = SoftmaxVocab.from_counts(counts or Counter(), settings.max_vocab_size, settings.min_count)
    if bilm.softmax is None:
        torch.manual_seed(settings.seed + 1)
        bilm.set_softmax(vocab.tokens)
        # The bias starts at each word's log unigram probability, so that words the sampled
        # softmax rarely draws do not keep a share of the full softmax's mass (measured: with a
        # zero bias, the full-softmax perplexity of one direction can blow up while the sampled
        # loss goes on falling).
        with torch.no_grad():
            bilm.softmax.bias.copy_(torch.tensor(vocab.log_frequencies(counts or Counter(), stats.sentences)))
    output_dir.mkdir(parents=True, exist_ok=True)
    spec["corpus"] = stats.to_dict()
    spec["vocab_size"] = len(vocab)
    vocab.to_file(output_dir / VOCAB_FILE)
    (output_dir / RUN_FILE).write_text(json.dumps(spec, indent=2), encoding="utf8")
    return bilm, stats, heldout
