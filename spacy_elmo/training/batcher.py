"""Sentences streamed into rows of fixed-length windows, as bilm-tf trains (its `data.py`: `LMDataset`).

Each of the `batch_size` rows is an endless stream of sentences wrapped in <S> … </S>; a batch is
the next `unroll_steps` tokens of every row as inputs and the tokens one step later as targets,
so the LSTM state of a row carries over from one batch to the next. The backward LM reads the
same sentences, each reversed with the markers swapped, aligned position by position with the
forward stream.
"""

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np
import torch

from .corpus import Cursor
from .vocab import BOS, EOS, SoftmaxVocab

SentenceStream = Iterator[Tuple[Cursor, List[str]]]


@dataclass
class TokenWindow:
    """One batch as strings: per direction and row, `unroll_steps` inputs and targets.

    Rows shorter than the window (only at the end of an evaluation pass) are padded; `lengths`
    gives each row's real length (0 for a row with nothing left).
    """

    inputs: Tuple[List[List[str]], List[List[str]]]
    targets: Tuple[List[List[str]], List[List[str]]]
    lengths: List[int]


@dataclass
class TensorBatch:
    """A TokenWindow as tensors: each distinct input token is encoded once.

    char_ids (Tensor): (U, M) character ids of the U distinct input tokens.
    token_index (Tensor): (2, B, T) row of char_ids for each input position.
    targets (Tensor): (2, B, T) softmax ids of the targets.
    mask (Tensor): (B, T) bool, the real positions.
    lengths (Tensor): (B,) int64.
    """

    char_ids: torch.Tensor
    token_index: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor

    @property
    def n_tokens(self) -> int:
        """Real positions per direction."""
        return int(self.lengths.sum())

    def to(self, device: torch.device) -> "TensorBatch":
        return TensorBatch(
            *(t.to(device) for t in (self.char_ids, self.token_index, self.targets, self.mask, self.lengths))
        )


class RowBatcher:
    """Cut a sentence stream into batches of `batch_size` rows × `unroll_steps` tokens.

    sentences (SentenceStream): (cursor after the sentence, tokens), e.g. TextCorpus.sentences.
    cursor (Cursor): the position `sentences` starts at; saved with the rows by `state_dict`.
    rows (Optional[Dict]): the row buffers from `state_dict`, to resume.
    """

    def __init__(
        self,
        sentences: SentenceStream,
        batch_size: int,
        unroll_steps: int,
        cursor: Optional[Cursor] = None,
        rows: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.sentences = sentences
        self.batch_size = batch_size
        self.unroll_steps = unroll_steps
        self.cursor = cursor or Cursor()
        self.forward_rows: List[List[str]] = (
            [list(r) for r in rows["forward"]] if rows else [[] for _ in range(batch_size)]
        )
        self.backward_rows: List[List[str]] = (
            [list(r) for r in rows["backward"]] if rows else [[] for _ in range(batch_size)]
        )
        if len(self.forward_rows) != batch_size:
            raise ValueError(f"saved rows are for batch size {len(self.forward_rows)}, not {batch_size}")
        self.exhausted = False

    def state_dict(self) -> Dict[str, Any]:
        """JSON-serialisable position: the stream cursor and the unread tokens of each row."""
        return {"cursor": self.cursor.to_dict(), "forward": self.forward_rows, "backward": self.backward_rows}

    def next_window(self, drain: bool = False) -> Optional[TokenWindow]:
        """The next batch; None when the stream ends. With `drain`, rows that ran dry are
        padded (length < unroll_steps) until every row is used up, as evaluation needs."""
        needed = self.unroll_steps + 1
        for row in range(self.batch_size):
            while len(self.forward_rows[row]) < needed and self._pull(row):
                pass
        lengths = [min(self.unroll_steps, len(r) - 1) if len(r) > 1 else 0 for r in self.forward_rows]
        if (min(lengths) < self.unroll_steps and not drain) or max(lengths) == 0:
            return None
        inputs: Tuple[List[List[str]], List[List[str]]] = ([], [])
        targets: Tuple[List[List[str]], List[List[str]]] = ([], [])
        for direction, rows in enumerate((self.forward_rows, self.backward_rows)):
            for row, n in zip(rows, lengths):
                pad = [BOS] * (self.unroll_steps - n)
                inputs[direction].append(row[:n] + pad)
                targets[direction].append(row[1 : n + 1] + pad)
                del row[:n]
        return TokenWindow(inputs, targets, lengths)

    def _pull(self, row: int) -> bool:
        if self.exhausted:
            return False
        try:
            self.cursor, tokens = next(self.sentences)
        except StopIteration:
            self.exhausted = True
            return False
        self.forward_rows[row].extend([BOS, *tokens, EOS])
        self.backward_rows[row].extend([EOS, *reversed(tokens), BOS])
        return True


def to_tensors(window: TokenWindow, encode_characters: Callable[[List[str]], Any], vocab: SoftmaxVocab) -> TensorBatch:
    """Encode a TokenWindow; `encode_characters` maps token strings to (n, M) character ids."""
    distinct: Dict[str, int] = {}
    index = np.array(
        [[[distinct.setdefault(t, len(distinct)) for t in row] for row in rows] for rows in window.inputs],
        dtype=np.int64,
    )
    target_ids = np.array([[vocab.ids(row) for row in rows] for rows in window.targets], dtype=np.int64)
    lengths = torch.tensor(window.lengths, dtype=torch.int64)
    mask = torch.arange(len(window.inputs[0][0])).unsqueeze(0) < lengths.unsqueeze(1)
    char_ids = torch.as_tensor(encode_characters(list(distinct)), dtype=torch.int64)
    return TensorBatch(char_ids, torch.from_numpy(index), torch.from_numpy(target_ids), mask, lengths)
