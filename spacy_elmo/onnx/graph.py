"""The whole stateless biLM as one export-only module: character ids in, every layer out."""
from typing import List, Optional, Tuple

import torch
from torch import Tensor, nn

from ..bilm.lexicon import Lexicon
from ..bilm.model import BiLM
from ..characters import BOS_TOKEN, EOS_TOKEN
from .lstm import ExportLstm


class BiLMGraph(nn.Module):
    """The stateless forward of a float32 `BiLM` (its `embed_batch`) in ONNX-friendly ops.

    Takes (K, M) int64 character ids of the tokens to encode (rows of `CharacterMapper.encode`;
    with learned vocabularies, (K, M + 1) rows of `Lexicon.encode`, the word id last),
    (H, P) float32 token embeddings known already (the runner's cache), (B, T) int64 indices of
    each slot's embedding in [known; new] and (B,) int64 sentence lengths (slots after a
    sentence's tokens are padding, their index any valid row). Returns (n_layers, B, T, 2P)
    float32: the token layer (duplicated), then each LSTM layer (forward and backward halves),
    zero at padding; and the (K, P) embeddings of the new tokens, for the runner to cache.

    Each sentence is read between <S> and </S> as in bilm-tf: the forward LM's first step on <S>
    and the backward LM's on </S> are the same for every sentence, so their final states are
    constants of the graph (as `BiLM` caches them); the markers' own outputs are not returned.
    Not stateful: no LSTM state is carried across calls. The LSTMs take the rows in order of
    length, longest first, whatever their order in the batch, and compute only the slots of
    tokens: each step only the rows whose sentences it has not passed (`ExportLstm`); the first
    layer's input products once per row of [known; new] (the runner passes the batch's tokens only).
    """

    def __init__(self, bilm: BiLM) -> None:
        super().__init__()
        config = bilm.config
        self.encoder = bilm.token_encoder
        self.word_column = isinstance(bilm.characters, Lexicon)  # ELMoForManyLangs: M character ids, then the word id
        self.max_filter_width = config.max_filter_width
        self.activation = torch.relu if config.activation == "relu" else torch.tanh
        self.skip_connections = config.use_skip_connections
        with torch.no_grad():
            markers = bilm.embed_tokens([BOS_TOKEN, EOS_TOKEN])  # forward reads <S>, backward </S>
            _, start = bilm.lstm(markers.view(2, 1, 1, -1), torch.ones(1, dtype=torch.int64))
        self.lstms = nn.ModuleList(
            nn.ModuleList(ExportLstm(layer, direction, state, config.cell_clip, config.proj_clip) for direction in (0, 1))
            for layer, state in zip(bilm.lstm.layers, start)
        )

    def forward(self, char_ids: Tensor, known: Tensor, token_index: Tensor, lengths: Tensor) -> Tuple[Tensor, Tensor]:
        new = self._token_embeddings(char_ids)  # (K, P): only the tokens the runner has not cached
        table = torch.cat([known, new], dim=0)
        batch, n_tokens = token_index.shape
        positions = torch.arange(n_tokens).unsqueeze(0)
        ends = lengths.unsqueeze(1)
        present = positions < ends  # (B, T)
        # Per row, the index that reverses its tokens (the backward LM's reading order).
        reverse = torch.where(present, ends - 1 - positions, positions)
        mask = present.unsqueeze(-1).to(torch.float32)
        tokens = torch.index_select(table, 0, token_index.reshape(-1)).view(batch, n_tokens, -1) * mask
        layers: List[Tensor] = [torch.cat([tokens, tokens], dim=-1)]
        # The LSTMs take the rows longest first and compute only the slots of tokens, packed
        # time-major: step 0's active rows, then step 1's, ...
        order = torch.argsort(lengths, descending=True)
        valid = (positions.t() < lengths[order].unsqueeze(0)).reshape(-1)  # (T·B) as t·B + row
        active = valid.view(n_tokens, batch).sum(dim=1)
        slots = torch.nonzero(valid).squeeze(1)  # (N,)
        step, row = slots // batch, order[slots % batch]
        flat_index = token_index.reshape(-1)
        forward_tokens = torch.index_select(flat_index, 0, row * n_tokens + step)
        backward_tokens = torch.index_select(flat_index, 0, row * n_tokens + lengths[row] - 1 - step)
        # Each (B, T) slot's row of the packed outputs; N, a zero row, past the sentence's length.
        packed_row = torch.where(valid, valid.long().cumsum(0) - 1, slots.shape[0])
        rank = torch.argsort(order).unsqueeze(1)  # (B, 1): each row's place in the LSTMs
        forward_at = torch.index_select(packed_row, 0, (positions * batch + rank).reshape(-1))
        backward_at = torch.index_select(packed_row, 0, (reverse * batch + rank).reshape(-1))
        forward_in, backward_in = table, table  # the first layer's products once per distinct token
        for index, (forward_lstm, backward_lstm) in enumerate(self.lstms):
            forward_products = forward_lstm.input_products(forward_in)
            backward_products = backward_lstm.input_products(backward_in)
            if index == 0:  # then per slot
                forward_products = torch.index_select(forward_products, 0, forward_tokens)
                backward_products = torch.index_select(backward_products, 0, backward_tokens)
            forward_out = forward_lstm(forward_products, active, batch)  # (N, P)
            backward_out = backward_lstm(backward_products, active, batch)
            if index > 0 and self.skip_connections:
                forward_out, backward_out = forward_out + forward_in, backward_out + backward_in
            unpacked = [_unpacked(forward_out, forward_at), _unpacked(backward_out, backward_at)]
            layers.append(torch.cat(unpacked, dim=-1).view(batch, n_tokens, -1))
            forward_in, backward_in = forward_out, backward_out
        return torch.stack(layers), new

    def _token_embeddings(self, char_ids: Tensor) -> Tensor:
        """The character CNN, highway layers and projection of `CharTokenEncoder`, (N, M) ids to
        (N, P), in one batch (the encoder's grouping by length is exact but data-dependent); with
        learned vocabularies, (N, M + 1) ids and the word embedding (`LexiconTokenEncoder`)."""
        encoder = self.encoder
        # As the encoder does: trailing PAD positions leave every max-pool unchanged while each
        # filter still sees one all-PAD window, so keep the longest token plus the widest filter.
        used = encoder._used_lengths(char_ids)
        words: Optional[Tensor] = None
        if self.word_column:
            char_ids, words = char_ids[:, :-1], char_ids[:, -1]
        keep = torch.clamp(used.max() + self.max_filter_width, max=char_ids.shape[1])
        char_ids = torch.index_select(char_ids, 1, torch.arange(keep))
        chars = encoder.char_embedding(char_ids).transpose(1, 2)  # (N, E, M')
        pooled = [conv(chars).max(dim=-1).values for conv in encoder.convolutions]
        x = self.activation(torch.cat(pooled, dim=-1))
        for highway in encoder.highways:
            x = highway(x)
        word_embedding = getattr(encoder, "word_embedding", None)
        if words is not None and word_embedding is not None:
            x = torch.cat([word_embedding(words), x], dim=-1)
        return encoder.projection(x) if encoder.projection is not None else x


def _unpacked(x: Tensor, rows: Tensor) -> Tensor:
    """The rows `rows` of packed (N, W) outputs and one zero row after them."""
    return torch.index_select(torch.cat([x, x.new_zeros(1, x.shape[1])]), 0, rows)
