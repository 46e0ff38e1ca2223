"""`embed_dataset` on a two-node Ray cluster (ray.cluster_utils.Cluster, one CPU per node)."""
import re

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

from ray.cluster_utils import Cluster  # noqa: E402

from spacy_elmo.layers.elmo_model import ElmoModelSettings  # noqa: E402
from spacy_elmo.embed.lines import LineEmbedder  # noqa: E402
from spacy_elmo.embed.settings import EmbedSettings  # noqa: E402
from spacy_elmo.ray_data import embed_dataset  # noqa: E402
from spacy_elmo.ray_data.inputs import read_inputs  # noqa: E402
from spacy_elmo.ray_data.output import to_array  # noqa: E402

pytestmark = pytest.mark.slow


def model_settings(weights, options, **model):
    return EmbedSettings(model=ElmoModelSettings(bilm=str(weights), options=str(options), **model))


@pytest.fixture()
def two_nodes():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    # Both actors ready before the first block: otherwise, on a busy machine, the first actor
    # can finish all 8 blocks while the second is still loading (seen once in CI).
    previous_wait, context.wait_for_min_actors_s = context.wait_for_min_actors_s, 300
    yield cluster
    context.wait_for_min_actors_s = previous_wait
    ray.shutdown()
    cluster.shutdown()


def test_two_nodes_share_the_work_and_give_the_same_rows(two_nodes, allennlp_model_files, tmp_path):
    lines = [f"sentence {i} with {' '.join(['more'] * (i % 7))} words ." for i in range(64)]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf8")
    weights, options = allennlp_model_files
    rows = read_inputs([str(tmp_path / "in.txt")], rows_per_block=8)
    embedded = embed_dataset(rows, model_settings(weights, options, batch_size=8), concurrency=2).materialize()
    stats = embedded.stats()
    section = stats[stats.index("MapBatches(EmbedRows)") :]
    assert int(re.search(r"(\d+) nodes used", section).group(1)) == 2, stats
    by_line = {row["line"]: row for row in embedded.take_all()}
    assert sorted(by_line) == list(range(len(lines)))
    embedder = LineEmbedder(model_settings(weights, options))
    for i, (tokens, expected) in enumerate(embedder(lines)):
        row = by_line[i]
        assert row["tokens"] == tokens
        np.testing.assert_allclose(to_array(row["shape"], row["dtype"], row["vectors"]), expected, rtol=1e-5, atol=1e-5)
