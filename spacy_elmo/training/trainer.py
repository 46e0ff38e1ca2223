"""The training loop of the bilm-tf recipe, in one process or one of several under torchrun.

The output folder of a run holds ``checkpoints/``, ``metrics.jsonl`` and, at the end, ``model/``
(a native model folder with softmax and vocabulary) and, when asked, ``original/``
(options.json + weights.hdf5).
"""

import json
import math
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import torch
from tqdm import tqdm

from ..bilm import BiLM, export_original, save_bilm
from ..bilm.original_format import check_exportable
from .batcher import RowBatcher, to_tensors
from ..bilm.model_info import write_model_info
from .checkpoint import Checkpoint, checkpoint_path, write_checkpoint
from .corpus import CorpusStats, Cursor, TextCorpus
from .ddp import Processes, all_agree, gather, wrap_model
from .errors import TrainingDiverged
from .evaluation import Perplexity, evaluate_perplexity
from .objective import BiLMObjective, LstmState
from .optimizer import load_optimizer_state, make_optimizer, optimizer_state, trainable_parameters
from .settings import TrainingSettings
from .vocab import SoftmaxVocab

CHECKPOINT_DIR = "checkpoints"
METRICS_FILE = "metrics.jsonl"
MODEL_DIR = "model"
ORIGINAL_DIR = "original"

INTERRUPTED = "interrupted (Ctrl-C or SIGTERM)"


@dataclass
class PretrainResult:
    """Summary of a finished (or budget-stopped) run.

    steps, tokens (int): totals of the run so far (training tokens of all processes).
    loss (Optional[float]): the last step's sampled-softmax loss (mean of both directions).
    tokens_per_second (float): of this invocation, time spent evaluating and checkpointing left out.
    heldout (Optional[Perplexity]): the final held-out perplexity, when a held-out file was given.
    skipped (Dict[str, int]): lines of the training text skipped, by reason.
    main_process (bool): whether this process is the one that reports.
    stopped_by (str): what ended the run: a budget, the end of the text, or an interruption
        (`INTERRUPTED`; the model is then not written, the checkpoint is).
    checkpoint (Optional[Path]): the newest checkpoint.
    """

    output_dir: Path
    steps: int
    tokens: int
    loss: Optional[float]
    tokens_per_second: float
    heldout: Optional[Perplexity] = None
    skipped: Dict[str, int] = field(default_factory=dict)
    main_process: bool = True
    stopped_by: str = ""
    checkpoint: Optional[Path] = None

    @property
    def interrupted(self) -> bool:
        return self.stopped_by == INTERRUPTED


class Trainer:
    """Runs the training steps, checkpoints, held-out evaluation and the final export."""

    def __init__(
        self,
        output_dir: Path,
        bilm: BiLM,
        corpus: TextCorpus,
        settings: TrainingSettings,
        processes: Processes,
        show_progress: bool,
        heldout: Optional[List[List[str]]],
        stats: Optional[CorpusStats],
    ) -> None:
        self.output_dir = output_dir
        self.settings = settings
        self.processes = processes
        self.show_progress = show_progress and processes.is_main
        self.corpus = corpus
        self.stats = stats
        self.bilm = bilm.to(processes.device).train()
        self.bilm.lstm.compiled_cells = settings.compile
        self.vocab = SoftmaxVocab(bilm.vocab or [])
        rank_seed = settings.seed * 1000 + processes.rank
        self.autocast_dtype = torch.bfloat16 if settings.compute_dtype == "bfloat16" else None
        self.objective = BiLMObjective(
            self.bilm,
            settings.negatives,
            settings.dropout,
            seed=rank_seed,
            compute_dtype=self.autocast_dtype or torch.float32,
        )
        self.model = wrap_model(self.objective, processes)
        named = trainable_parameters(self.objective)
        self.parameter_names = [name for name, _ in named]
        self.parameters = [p for _, p in named]
        self.optimizer = make_optimizer(self.objective, settings)
        self.step = 0
        self.tokens = 0
        self.state: Optional[LstmState] = None
        self.last_checkpoint = -1
        self.batcher = RowBatcher(self._sentences(Cursor()), settings.batch_size, settings.unroll_steps)
        self.heldout = heldout if processes.is_main else None
        torch.manual_seed(rank_seed)
        self._stop_signal = False
        self._evaluated: Optional[Tuple[int, Perplexity]] = None
        self._finite = True

    def restore(self, checkpoint: Checkpoint) -> None:
        """Continue from `checkpoint`: weights, optimizer, data position, LSTM state, random state."""
        state = checkpoint.state
        load_optimizer_state(
            self.optimizer, self.parameter_names, checkpoint.optimizer_tensors, checkpoint.optimizer_meta
        )
        self.step, self.tokens, self.last_checkpoint = state["step"], state["tokens"], state["step"]
        prefix = f"rank{self.processes.rank}/"
        tensors = {k[len(prefix) :]: v for k, v in checkpoint.tensors.items() if k.startswith(prefix)}
        rows = state["ranks"][self.processes.rank]
        cursor = Cursor.from_dict(rows["cursor"])
        self.batcher = RowBatcher(
            self._sentences(cursor), self.settings.batch_size, self.settings.unroll_steps, cursor, rows
        )
        n_layers = self.bilm.config.n_layers
        if "lstm/0/c" in tensors:
            device = self.processes.device
            self.state = [
                (tensors[f"lstm/{i}/c"].to(device), tensors[f"lstm/{i}/h"].to(device)) for i in range(n_layers)
            ]
        torch.set_rng_state(tensors["torch_rng"])
        self.objective.generator.set_state(tensors["sampler_rng"])
        if "cuda_rng" in tensors and self.processes.device.type == "cuda":
            torch.cuda.set_rng_state(tensors["cuda_rng"], self.processes.device)

    def release(self) -> None:
        """Drop the data-parallel wrapper, so that its communication state goes before the
        process group does (destroyed later, at exit, it could abort a process)."""
        self.model = self.objective

    def train(self, export: bool) -> PretrainResult:
        """Train until a budget is reached or the data's epochs are done; then save the model."""
        if export:
            check_exportable(self.bilm)  # before training, not after it
        settings = self.settings
        start = time.monotonic()
        start_tokens = self.tokens
        loss: Optional[float] = None
        paused = 0.0  # seconds spent evaluating and checkpointing, left out of the speed
        bar = tqdm(
            total=self._planned_steps(),
            initial=self.step,
            unit="step",
            disable=not self.show_progress,
            dynamic_ncols=True,
        )
        previous_handlers = self._catch_stop_signals()
        stopped_by = ""
        try:
            while all_agree(self._finite and not (stopped_by := self._stop_reason(start)), self.processes):
                window = self.batcher.next_window()
                if not all_agree(window is not None, self.processes):
                    stopped_by = "the training text ended" + (
                        f" ({settings.epochs} epoch{'s' if settings.epochs != 1 else ''}, --epochs)"
                        if settings.epochs is not None
                        else ""
                    )
                    break
                losses = self._train_step(window)
                loss = float(losses.mean())
                self._finite = math.isfinite(loss)
                speed = (self.tokens - start_tokens) / max(time.monotonic() - start - paused, 1e-9)
                bar.update(1)
                bar.set_postfix(
                    loss=f"{loss:.3f}", ppl=f"{math.exp(min(loss, 50)):.1f}", tok_s=f"{speed:,.0f}", refresh=False
                )
                record: Dict[str, Any] = {}
                if self.step % settings.log_every == 0:
                    record.update(
                        loss_forward=float(losses[0]), loss_backward=float(losses[1]), tokens_per_second=speed
                    )
                if self.heldout is not None and self.step % settings.eval_every == 0:
                    pause = time.monotonic()
                    heldout = self._evaluate()
                    paused += time.monotonic() - pause
                    record.update(
                        heldout_perplexity=heldout.mean,
                        heldout_forward=heldout.forward,
                        heldout_backward=heldout.backward,
                    )
                    bar.write(
                        f"step {self.step}: held-out perplexity {heldout.mean:.2f} "
                        f"(forward {heldout.forward:.2f}, backward {heldout.backward:.2f})"
                    )
                if record:
                    self._log(record)
                if self.step % settings.checkpoint_every == 0 and self._finite and self._weights_finite():
                    pause = time.monotonic()
                    self._checkpoint()
                    paused += time.monotonic() - pause
        finally:
            bar.close()
            self._restore_signal_handlers(previous_handlers)
        training_seconds = time.monotonic() - start - paused
        if not all_agree(self._finite, self.processes):
            raise TrainingDiverged(
                f"the loss is no longer finite at step {self.step}; the last good checkpoint is step "
                f"{self.last_checkpoint}. Start again with a lower --learning-rate or --clip-norm"
            )
        if self.step != self.last_checkpoint and self._weights_finite():
            self._checkpoint()
        result = PretrainResult(
            self.output_dir,
            self.step,
            self.tokens,
            loss,
            (self.tokens - start_tokens) / max(training_seconds, 1e-9),
            skipped=dict(self.stats.skipped) if self.stats else {},
            main_process=self.processes.is_main,
            stopped_by=stopped_by or self._stop_reason(start) or "",
            checkpoint=checkpoint_path(self.output_dir / CHECKPOINT_DIR, self.last_checkpoint) if self.last_checkpoint >= 0 else None,
        )
        if self.processes.is_main and not result.interrupted:
            result.heldout = self._finish(export)
        return result

    def _train_step(self, window) -> torch.Tensor:  # type: ignore[no-untyped-def]
        batch = to_tensors(window, self.bilm.characters.encode, self.vocab).to(self.processes.device)
        device_type = self.processes.device.type
        with torch.autocast(device_type, dtype=self.autocast_dtype, enabled=self.autocast_dtype is not None):
            losses, state = self.model(batch, self.state)
        self.optimizer.zero_grad(set_to_none=True)
        # bilm-tf differentiates loss × unroll_steps (its loss is a mean over the window).
        (losses.mean() * self.settings.unroll_steps).backward()
        torch.nn.utils.clip_grad_norm_(self.parameters, self.settings.clip_norm)
        self.optimizer.step()
        self.state = [(c.detach(), h.detach()) for c, h in state]
        self.step += 1
        self.tokens += batch.n_tokens * self.processes.world_size
        return losses.detach().cpu()

    def _weights_finite(self) -> bool:
        return all(bool(torch.isfinite(p).all()) for p in self.parameters)

    def _stop_reason(self, start: float) -> str:
        """Why the run must stop now ("" while it may go on)."""
        s = self.settings
        if self._stop_signal:
            return INTERRUPTED
        if s.max_steps is not None and self.step >= s.max_steps:
            return f"--max-steps {s.max_steps:,} reached"
        if s.token_budget is not None and self.tokens >= s.token_budget:
            return f"--token-budget {s.token_budget:,} reached"
        if s.max_time is not None and time.monotonic() - start >= s.max_time:
            return f"--max-time {s.max_time:,.0f} s reached"
        return ""

    def _planned_steps(self) -> Optional[int]:
        s = self.settings
        per_step = s.tokens_per_step(self.processes.world_size)
        limits = [s.max_steps] if s.max_steps is not None else []
        if s.token_budget is not None:
            limits.append(math.ceil(s.token_budget / per_step))
        if s.epochs is not None and self.stats is not None:
            limits.append(s.epochs * self.stats.stream_tokens // per_step)
        return min(limits) if limits else None

    def _sentences(self, cursor: Cursor):  # type: ignore[no-untyped-def]
        return self.corpus.sentences(cursor, self.settings.epochs)

    def _evaluate(self) -> Perplexity:
        """Held-out perplexity of the current weights (computed once per step)."""
        assert self.heldout is not None
        if self._evaluated is None or self._evaluated[0] != self.step:
            result = evaluate_perplexity(
                self.bilm,
                self.heldout,
                batch_size=min(self.settings.batch_size, 64),
                unroll_steps=self.settings.unroll_steps,
            )
            self._evaluated = (self.step, result)
        return self._evaluated[1]

    def _checkpoint(self) -> None:
        """Collect every process's position and state; the main process writes them."""
        rank_state = {"batcher": self.batcher.state_dict(), "tensors": self._rank_tensors()}
        everything = gather(rank_state, self.processes)
        if self.processes.is_main:
            tensors: Dict[str, torch.Tensor] = {}
            for rank, item in enumerate(everything):
                tensors.update({f"rank{rank}/{k}": v for k, v in item["tensors"].items()})
            optimizer_tensors, optimizer_meta = optimizer_state(self.optimizer, self.parameter_names)
            state = {"step": self.step, "tokens": self.tokens, "ranks": [item["batcher"] for item in everything]}
            checkpoint = Checkpoint(self.bilm, state, tensors, optimizer_tensors, optimizer_meta)
            write_checkpoint(
                self.output_dir / CHECKPOINT_DIR, self.step, checkpoint, self.settings.keep_checkpoints
            )
        self.last_checkpoint = self.step

    def _rank_tensors(self) -> Dict[str, torch.Tensor]:
        tensors = {"torch_rng": torch.get_rng_state(), "sampler_rng": self.objective.generator.get_state()}
        if self.processes.device.type == "cuda":
            tensors["cuda_rng"] = torch.cuda.get_rng_state(self.processes.device)
        for i, (c, h) in enumerate(self.state or []):
            tensors[f"lstm/{i}/c"] = c.detach().cpu().contiguous()
            tensors[f"lstm/{i}/h"] = h.detach().cpu().contiguous()
        return tensors

    def _finish(self, export: bool) -> Optional[Perplexity]:
        """Write the final model (and original-format copy); evaluate on the held-out text."""
        folder = self.output_dir / MODEL_DIR
        save_bilm(self.bilm, folder, self.settings.storage_dtype)
        write_model_info(folder, {"lang": self.settings.lang, "steps": self.step, "tokens": self.tokens})
        if export:
            export_original(self.bilm, self.output_dir / ORIGINAL_DIR)
        heldout = self._evaluate() if self.heldout is not None else None
        if heldout is not None and not self._final_row_logged():
            self._log(
                {
                    "final": True,
                    "heldout_perplexity": heldout.mean,
                    "heldout_forward": heldout.forward,
                    "heldout_backward": heldout.backward,
                }
            )
        return heldout

    def _final_row_logged(self) -> bool:
        """A run resumed at its budget (e.g. to write its model) already logged this step's final row."""
        path = self.output_dir / METRICS_FILE
        rows = path.read_text(encoding="utf8").splitlines() if path.is_file() else []
        last = json.loads(rows[-1]) if rows else {}
        return bool(last.get("final")) and last.get("step") == self.step

    def _log(self, record: Dict[str, Any]) -> None:
        if self.processes.is_main:
            with open(self.output_dir / METRICS_FILE, "a", encoding="utf8") as file:
                file.write(json.dumps({"step": self.step, "tokens": self.tokens, **record}) + "\n")

    def _catch_stop_signals(self) -> Dict[int, Any]:
        """Ctrl-C / SIGTERM end the run after the current step, with a checkpoint; a second one aborts."""

        def request_stop(signum, frame):  # type: ignore[no-untyped-def]
            self._stop_signal = True
            signal.signal(signum, previous[signum])

        previous: Dict[int, Any] = {}
        try:
            for signum in (signal.SIGINT, signal.SIGTERM):
                previous[signum] = signal.signal(signum, request_stop)
        except ValueError:  # not the main thread: leave signals alone
            pass
        return previous

    @staticmethod
    def _restore_signal_handlers(previous: Dict[int, Any]) -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
