"""Where batch work runs: a local process pool (default) or a Ray cluster (`--executor ray`).

`run_units(fn, units, workers, executor, fresh=True)` applies a module-level function to argument
tuples and yields (unit, result) as results arrive. Local pools use the `spawn` start method, so
every round of work runs in fresh interpreters that share no state with the parent or with an
earlier round — which is what makes reruns in separate processes meaningful. Ray is an optional
extra (`pip install toolgym[ray]`); tests run it as a local Ray instance.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Literal

from simulator.errors import ToolgymError

Executor = Literal["local", "ray"]
EXECUTORS: tuple[Executor, ...] = ("local", "ray")


def run_units(
    fn: Callable[..., Any], units: Sequence[tuple[Any, ...]], workers: int = 1, executor: Executor = "local"
) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Run fn(*unit) for every unit; yield (unit, result) in completion order. Exceptions propagate."""
    if not units:
        return
    if executor == "ray":
        yield from _ray(fn, units, workers)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, workers), mp_context=context, initializer=_quiet) as pool:
        futures = {pool.submit(fn, *unit): unit for unit in units}
        for future in as_completed(futures):
            yield futures[future], future.result()


def _quiet() -> None:
    os.environ.setdefault("PYTHONWARNINGS", "ignore")


def _ray(
    fn: Callable[..., Any], units: Sequence[tuple[Any, ...]], workers: int
) -> Iterator[tuple[tuple[Any, ...], Any]]:
    try:
        import ray
    except ImportError:
        raise ToolgymError(
            "--executor ray needs Ray, which is not installed: pip install 'toolgym[ray]'"
        ) from None
    started = False
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(
                num_cpus=max(1, workers),
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        started = True
    try:
        remote = ray.remote(fn)
        refs = {remote.remote(*unit): unit for unit in units}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield refs[ref], ray.get(ref)
    finally:
        if started:
            ray.shutdown()
