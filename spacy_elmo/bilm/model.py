"""The ELMo biLM: token encoder, forward and backward LSTM stacks, and the embedding API."""
from typing import Hashable, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import nn

from ..batching import Sentences, check_sentences, in_length_batches
from ..characters import BOS_TOKEN, EOS_TOKEN, CharacterMapper
from ..runtime import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS
from .architecture import BiLMArchitecture
from .errors import ModelFormatError
from .lexicon import Lexicon
from .lexicon_encoder import LexiconTokenEncoder
from .lstm import BiLstmStack, LayerState
from ..runtime import DEFAULT_CACHE_BYTES
from .token_cache import TokenEmbeddingCache
from .token_encoder import CharTokenEncoder


class BiLM(nn.Module):
    """A bidirectional language model in the ELMo architecture.

    Outputs L+1 layers of width 2·P per token: the token embedding duplicated, then each LSTM
    layer (forward and backward states concatenated), as AllenNLP and bilm-tf do.
    The default is stateless: a sentence's vectors depend on that sentence only.

    config (BiLMArchitecture): the architecture.
    cache_bytes (int): memory bound of the per-string cache of token embeddings.
    """

    def __init__(self, config: BiLMArchitecture, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        super().__init__()
        self.config = config
        lexicon = Lexicon.from_options_json(config.extra, config.max_characters_per_token)
        if lexicon is None:
            self.characters: Union[CharacterMapper, Lexicon] = CharacterMapper(config.max_characters_per_token)
            self.token_encoder: CharTokenEncoder = CharTokenEncoder(config)
        else:  # learned characters and words (ELMoForManyLangs)
            self.characters = lexicon
            self.token_encoder = LexiconTokenEncoder(config, lexicon)
        self.lstm = BiLstmStack(config)
        self.softmax: Optional[nn.Linear] = None
        self.vocab: Optional[List[str]] = None
        self.token_cache = TokenEmbeddingCache(cache_bytes)
        self._state: Optional[List[LayerState]] = None
        self._primed: Optional[Tuple[Hashable, List[LayerState]]] = None

    @property
    def n_layers(self) -> int:
        """Number of output layers (token layer + LSTM layers)."""
        return self.config.n_output_layers

    @property
    def output_dim(self) -> int:
        """Width of each output layer, 2·P."""
        return self.config.output_dim

    @property
    def device(self) -> torch.device:
        return self.lstm.layers[0].bias.device

    @property
    def dtype(self) -> torch.dtype:
        return self.lstm.layers[0].bias.dtype

    def reset_parameters(self) -> None:
        """Initialise all weights as bilm-tf does before training."""
        self.token_encoder.reset_parameters()
        self.lstm.reset_parameters()
        if self.softmax is not None:
            with torch.no_grad():
                nn.init.normal_(self.softmax.weight, 0.0, 1.0 / self.config.projection_dim**0.5)
                self.softmax.bias.zero_()

    def set_softmax(self, vocab: Sequence[str]) -> None:
        """Attach a new softmax over `vocab` (shared by both directions), initialised as bilm-tf."""
        self.vocab = list(vocab)
        self.softmax = nn.Linear(self.config.projection_dim, len(self.vocab)).to(self.device, self.dtype)
        with torch.no_grad():
            nn.init.normal_(self.softmax.weight, 0.0, 1.0 / self.config.projection_dim**0.5)
            self.softmax.bias.zero_()

    def drop_softmax(self) -> None:
        """Forget the softmax and its vocabulary (the embeddings do not use them)."""
        self.softmax = None
        self.vocab = None

    def reset_states(self) -> None:
        """Forget the LSTM states carried between stateful calls."""
        self._state = None

    # --- embedding API -------------------------------------------------------------------------

    def embed_sentences(
        self,
        sentences: Sentences,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> List[np.ndarray]:
        """Embed tokenized sentences, stateless, in length-sorted batches.

        sentences (Sequence[Sequence[str]]): the tokens of each sentence.
        batch_size (int): most sentences per forward pass.
        max_tokens (int): most padded token slots (rows × longest) per forward pass; a longer
            sentence runs alone.
        RETURNS (List[np.ndarray]): per sentence a float32 array (n_layers, n_tokens, output_dim).
        """
        return in_length_batches(sentences, self.embed_batch, batch_size, max_tokens)

    def embed_batch(self, sentences: Sentences, stateful: bool = False) -> List[np.ndarray]:
        """Embed one batch, as the original ran it.

        stateful (bool): carry each row's final LSTM state into the same row of the next
            stateful call (bilm-tf / AllenNLP behaviour); `reset_states()` clears it.
        RETURNS (List[np.ndarray]): per sentence a float32 array (n_layers, n_tokens, output_dim).
        """
        check_sentences(sentences)
        with torch.inference_mode():
            layers, lengths = self._forward_batch(sentences, stateful)
            layers = layers.float().cpu().numpy()
        return [layers[i, :, 1 : n + 1].copy() for i, n in enumerate(lengths)]

    def layer_tensors(self, sentences: Sentences, stateful: bool = False) -> List[torch.Tensor]:
        """Like `embed_batch`, but torch tensors that carry gradients when grad is enabled."""
        check_sentences(sentences)
        layers, lengths = self._forward_batch(sentences, stateful)
        return [layers[i, :, 1 : n + 1] for i, n in enumerate(lengths)]

    def lm_layers(
        self,
        char_ids: torch.Tensor,
        token_index: torch.Tensor,
        lengths: torch.Tensor,
        state: Optional[List[LayerState]] = None,
        dropout: float = 0.0,
    ) -> Tuple[List[torch.Tensor], List[LayerState]]:
        """The language-model (training) pass: LSTM outputs of both directions for streams of
        tokens, carrying `state` across truncated-backpropagation windows.

        char_ids (torch.Tensor): (n_distinct, M) characters of each distinct token, encoded once.
        token_index (torch.Tensor): (2, B, T) rows of `char_ids` read by each direction.
        lengths (torch.Tensor): (B,) steps per row.
        state (Optional[List[LayerState]]): each layer's (c, h) from the previous window.
        dropout (float): on each LSTM layer's input, in training mode.
        RETURNS (Tuple[List[torch.Tensor], List[LayerState]]): per layer (2, B, T, P) outputs, and
            the final state.
        """
        embedded = self.token_encoder(char_ids)[token_index]
        return self.lstm(embedded, lengths, state, dropout=dropout)

    def forward(self, sentences: Sentences) -> List[torch.Tensor]:
        """The layers of each sentence, (n_layers, n_tokens, output_dim) tensors."""
        return self.layer_tensors(sentences)

    # --- internals ---------------------------------------------------------------------------

    def embed_tokens(self, tokens: Sequence[str]) -> torch.Tensor:
        """Context-independent embeddings (len(tokens), P) of token strings."""
        ids = torch.from_numpy(self.characters.encode(tokens)).to(self.device)
        return self.token_encoder(ids)

    def _token_table(self, vocabulary: List[str]) -> torch.Tensor:
        if torch.is_grad_enabled() and any(p.requires_grad for p in self.token_encoder.parameters()):
            return self.embed_tokens(vocabulary)  # gradients must reach the encoder: no cache
        return self.token_cache.embed(vocabulary, self.embed_tokens, _weights_version(self.token_encoder))

    def _forward_batch(self, sentences: Sentences, stateful: bool) -> Tuple[torch.Tensor, List[int]]:
        """Run the biLM; returns layers (B, n_layers, T+2, 2P) and the sentence lengths.

        Positions 0 and length+1 of the layers are the sentence markers; only the token layer
        is defined there.
        """
        lengths = [len(s) for s in sentences]
        n_steps = max(lengths, default=0) + 2
        vocabulary: dict = {BOS_TOKEN: 0, EOS_TOKEN: 1}
        ids = np.full((len(sentences), n_steps), -1, dtype=np.int64)  # -1: padding
        for row, sentence in enumerate(sentences):
            ids[row, 0] = 0
            for t, token in enumerate(sentence, start=1):
                ids[row, t] = vocabulary.setdefault(token, len(vocabulary))
            ids[row, len(sentence) + 1] = 1
        table = self._token_table(list(vocabulary))
        return self._run(table, torch.from_numpy(ids), torch.tensor(lengths, dtype=torch.int64), stateful), lengths

    def char_id_layers(self, char_ids: torch.Tensor, stateful: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
        """Run the biLM on character ids as AllenNLP's `batch_to_ids` makes them, every step
        included: unlike `embed_batch`, the LSTM layers are also defined at the sentence markers
        (AllenNLP's activations), since layer norm and `keep_sentence_boundaries` read them.

        char_ids (torch.Tensor): (B, T, M) int ids of each token's characters; padded token slots
            (after each sentence's tokens) are all zero.
        stateful (bool): as for `embed_batch`.
        RETURNS (Tuple[torch.Tensor, torch.Tensor]): layers (B, n_layers, T+2, 2P) with the
            sentence markers at 0 and length+1, zero at padding, and the sentence lengths (B,).
        """
        if isinstance(self.characters, Lexicon):
            raise ModelFormatError("this biLM has a learned character vocabulary; it takes tokens, not byte ids")
        if char_ids.dim() != 3 or char_ids.shape[-1] != self.characters.max_characters:
            raise ModelFormatError(
                f"character ids must have shape (batch, tokens, {self.characters.max_characters}), "
                f"got {tuple(char_ids.shape)}"
            )
        char_ids = char_ids.to("cpu", torch.int64)
        present = (char_ids > 0).any(-1)
        lengths = present.sum(1)
        if not bool((present == (torch.arange(present.shape[1]) < lengths.unsqueeze(1))).all()):
            raise ModelFormatError("character ids: padded (all-zero) token slots must follow each sentence's tokens")
        markers = torch.from_numpy(self.characters.encode([BOS_TOKEN, EOS_TOKEN]))
        rows, inverse = torch.unique(char_ids[present], dim=0, return_inverse=True)
        ids = torch.full((char_ids.shape[0], char_ids.shape[1] + 2), -1, dtype=torch.int64)
        ids[:, 1:-1][present] = inverse + 2
        ids[:, 0] = 0
        ids[torch.arange(len(lengths)), lengths + 1] = 1
        table = self.token_encoder(torch.cat([markers, rows]).to(self.device))
        return self._run(table, ids, lengths, stateful, every_step=True), lengths

    def _run(
        self, table: torch.Tensor, ids: torch.Tensor, lengths: torch.Tensor, stateful: bool, every_step: bool = False
    ) -> torch.Tensor:
        """The layers (B, n_layers, T+2, 2P) of sentences given as rows of a token table whose
        rows 0 and 1 are <S> and </S>; `ids` (B, T+2) index it, -1 for padding.

        every_step (bool): stateless, also run the steps whose outputs only the markers have.
        """
        device = self.device
        table = torch.cat([table, table.new_zeros(1, table.shape[1])])  # row -1: padding
        seq_lengths = lengths + 2
        n_steps = ids.shape[1]
        reverse_ids = torch.gather(ids, 1, _reverse_index(seq_lengths, n_steps))
        both = torch.stack([ids, reverse_ids]).to(device)  # (2, B, T) rows of the table
        if stateful:
            state = self._carried_state(ids.shape[0])
            outputs, new_state = self.lstm(table, seq_lengths, state, token_ids=both)
            self._store_state(new_state, ids.shape[0])
        elif every_step:
            outputs, _ = self.lstm(table, seq_lengths, None, token_ids=both)
        else:
            outputs = self._stateless_lstm(table, both, seq_lengths)
        back = _reverse_index(seq_lengths, n_steps).to(device)
        token_layer = table[both[0]]
        layers = [torch.cat([token_layer, token_layer], dim=-1)]
        for out in outputs:
            backward = torch.gather(out[1], 1, back.unsqueeze(-1).expand_as(out[1]))
            layers.append(torch.cat([out[0], backward], dim=-1))
        return torch.stack(layers, dim=1)

    def _stateless_lstm(self, table: torch.Tensor, token_ids: torch.Tensor, seq_lengths: torch.Tensor) -> List[torch.Tensor]:
        """Run the LSTMs from a zero state, skipping the steps every sentence shares or nobody reads.

        Each direction's first step (the forward LM reads <S>, the backward LM </S>) is the
        same for every sentence: it runs once, and its final state starts all rows. Nothing
        reads the forward LM's step on </S> nor the backward LM's step on <S> (the markers'
        outputs are dropped), so those do not run at all.
        """
        primed = self._primed_state(table[:2])
        batch_size = token_ids.shape[1]
        state = [(c.expand(-1, batch_size, -1), h.expand(-1, batch_size, -1)) for c, h in primed]
        outputs, _ = self.lstm(table, seq_lengths - 2, state, token_ids=token_ids[:, :, 1:])
        return [torch.nn.functional.pad(out, (0, 0, 1, 0)) for out in outputs]

    def _primed_state(self, markers: torch.Tensor) -> List[LayerState]:
        """The state after the first step from zero: forward on <S>, backward on </S>."""
        grad = torch.is_grad_enabled() and any(p.requires_grad for p in self.parameters())
        version = _weights_version(self)
        if grad or self._primed is None or self._primed[0] != version:
            first = markers.view(2, 1, 1, -1)  # rows 0, 1 of the table: <S>, </S>
            _, state = self.lstm(first, torch.ones(1, dtype=torch.int64))
            if grad:
                return state
            self._primed = (version, state)
        return self._primed[1]

    def _carried_state(self, batch_size: int) -> List[LayerState]:
        if self._state is None or self._state[0][0].shape[1] < batch_size:
            fresh = self.lstm.zero_state(batch_size, self.device, self.dtype)
            if self._state is not None:
                old = self._state[0][0].shape[1]
                for (c, h), (c_old, h_old) in zip(fresh, self._state):
                    c[:, :old] = c_old
                    h[:, :old] = h_old
            self._state = fresh
        return [(c[:, :batch_size], h[:, :batch_size]) for c, h in self._state]

    def _store_state(self, new_state: List[LayerState], batch_size: int) -> None:
        assert self._state is not None
        with torch.no_grad():
            for (c, h), (c_new, h_new) in zip(self._state, new_state):
                c[:, :batch_size] = c_new.detach()
                h[:, :batch_size] = h_new.detach()

    def _apply(self, fn, recurse=True):  # type: ignore[no-untyped-def]
        # Moving or casting the module invalidates carried states (cached tokens re-key themselves).
        self._state = None
        self._primed = None
        return super()._apply(fn, recurse)


def _weights_version(module: nn.Module) -> Hashable:
    """A fingerprint of a module's weights that changes when they are replaced, cast or updated."""
    return tuple((p.data_ptr(), p._version, p.dtype) for p in module.parameters())


def _reverse_index(lengths: torch.Tensor, n_steps: int) -> torch.Tensor:
    """Per row, the index that reverses the first `length` positions and keeps the rest."""
    positions = torch.arange(n_steps).unsqueeze(0)
    lengths = lengths.unsqueeze(1)
    return torch.where(positions < lengths, lengths - 1 - positions, positions)
