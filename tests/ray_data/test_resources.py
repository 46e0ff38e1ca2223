"""What an actor pool asks of Ray (no Ray cluster): the pool's checks, `map_batches`' arguments
and the torch threads of an actor."""
import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")

from spacy_elmo.errors import SpacyElmoError  # noqa: E402
from spacy_elmo.ray_data.resources import actor_options, check_pool, threads_for  # noqa: E402


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_a_pool_needs_a_whole_number_of_workers(workers):
    with pytest.raises(SpacyElmoError, match=rf"workers \(concurrency\) must be a whole number of at least 1, got {workers!r}"):
        check_pool(workers, 1, 0)


@pytest.mark.parametrize("cpus,gpus", [(0, 0), (-1, 0), (1, -0.5)])
def test_each_worker_needs_some_cpu_and_no_negative_gpus(cpus, gpus):
    with pytest.raises(SpacyElmoError, match=f"cpus per worker {cpus}, gpus per worker {gpus}"):
        check_pool(1, cpus, gpus)


def test_fractions_of_a_cpu_or_gpu_make_a_pool():
    check_pool(1, 0.25, 0)
    check_pool(4, 1, 0.5)


def test_actor_options_ask_for_a_fixed_pool_and_check_it_first():
    options = actor_options(3, num_cpus=2.5, num_gpus=0.5)
    assert (options["num_cpus"], options["num_gpus"]) == (2.5, 0.5)
    assert options["compute"].min_size == options["compute"].max_size == 3
    with pytest.raises(SpacyElmoError, match="workers"):
        actor_options(0, 1, 0)


@pytest.mark.parametrize("cpus,threads", [(0.25, 1), (1, 1), (2.9, 2), (4, 4)])
def test_an_actor_runs_a_torch_thread_per_whole_cpu_and_at_least_one(cpus, threads):
    assert threads_for(cpus) == threads
