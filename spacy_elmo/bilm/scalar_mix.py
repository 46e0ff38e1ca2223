"""ELMo's task-specific weighting of layers: γ · Σ_j softmax(w)_j · h_j (Peters et al. 2018, eq. 1)."""
from typing import Optional, Sequence

import torch
from torch import nn

LAYER_NORM_EPS = 1e-13


class ScalarMix(nn.Module):
    """A softmax-normalized weighted sum of layers, scaled by γ.

    n_layers (int): number of layers mixed.
    weights (Optional[Sequence[float]]): pre-softmax weights; None starts equal (all zero).
    gamma (float): the scale γ.
    trainable (bool): whether w and γ are learned.
    layer_norm (bool): normalize each layer first, with one mean and variance over all
        unmasked positions and channels of the batch (AllenNLP's ``do_layer_norm``).
    """

    def __init__(
        self,
        n_layers: int,
        weights: Optional[Sequence[float]] = None,
        gamma: float = 1.0,
        trainable: bool = True,
        layer_norm: bool = False,
    ) -> None:
        super().__init__()
        if weights is None:
            weights = [0.0] * n_layers
        if len(weights) != n_layers:
            raise ValueError(f"ScalarMix: got {len(weights)} weights for {n_layers} layers")
        self.n_layers = n_layers
        self.layer_norm = layer_norm
        self.weights = nn.Parameter(torch.tensor(list(weights), dtype=torch.float32), requires_grad=trainable)
        self.gamma = nn.Parameter(torch.tensor(float(gamma)), requires_grad=trainable)

    def normalized_weights(self) -> torch.Tensor:
        """The softmax-normalized layer weights s_j."""
        return torch.softmax(self.weights, dim=0)

    def forward(self, layers: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Mix layers of shape (n_layers, ..., D) into (..., D).

        mask (Optional[Tensor]): boolean (...) marking real positions, used by layer norm only.
        """
        if layers.shape[0] != self.n_layers:
            raise ValueError(f"ScalarMix: expected {self.n_layers} layers, got {layers.shape[0]}")
        if self.layer_norm:
            layers = torch.stack([self._normalize(layer, mask) for layer in layers])
        weights = self.normalized_weights().to(layers.dtype)
        shape = (self.n_layers,) + (1,) * (layers.dim() - 1)
        return self.gamma.to(layers.dtype) * (weights.view(shape) * layers).sum(dim=0)

    @staticmethod
    def _normalize(layer: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
        if mask is None:
            mask = torch.ones(layer.shape[:-1], dtype=torch.bool, device=layer.device)
        keep = mask.unsqueeze(-1).to(layer.dtype)
        count = keep.sum() * layer.shape[-1]
        mean = (layer * keep).sum() / count
        variance = (((layer - mean) * keep) ** 2).sum() / count
        return (layer - mean) / torch.sqrt(variance + LAYER_NORM_EPS)
