"""The names of the extension attributes that the `elmo` component sets and listeners read."""

# `doc._.elmo` (and `span._.elmo`, `token._.elmo`): the features.
ATTR = "elmo"
# `doc._.elmo_layer_mix`: the coefficients that select a representation from all stored layers.
MIX_ATTR = "elmo_layer_mix"
