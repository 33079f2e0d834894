"""What collective communication costs: the bytes this rank hands to collectives and the time they
are in flight, since the last `take()`.

Bytes are the payload (the tensor each rank contributes), not the wire traffic, which depends on
the algorithm (a ring all-reduce sends about 2(n-1)/n of it each way). Time is the union of the
spans during which at least one collective was in flight: DDP's bucket all-reduces overlap each
other and the backward pass, and a plain sum would count that overlap twice.

No `from __future__ import annotations` here: DDP checks a comm hook's annotations as objects.
"""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

COMM_BYTES = "system/comm_bytes"
COMM_SECONDS = "system/comm_s"


class CommMeter:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # DDP's futures complete on the backend's threads
        self._bytes = 0
        self._spans: list[tuple[float, float]] = []  # perf_counter seconds
        self._cuda_spans: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []

    @contextmanager
    def timed(self, *tensors: torch.Tensor) -> Iterator[None]:
        """Around a blocking collective: its payload, and its wall time on this rank (waiting
        for the slowest rank to arrive is part of what communication costs)."""
        started = time.perf_counter()
        yield
        self._add_span(started, time.perf_counter(), sum(_nbytes(t) for t in tensors))

    def ddp_hook(
        self, state: dist.ProcessGroup | None, bucket: dist.GradBucket
    ) -> torch.futures.Future[torch.Tensor]:
        """DDP's default gradient all-reduce (the mean over ranks), timed from the moment the
        bucket is ready to the moment its all-reduce completes. On a GPU the host returns
        before NCCL finishes, so the span is taken with CUDA events read at `take()`."""
        buffer = bucket.buffer()
        with self._lock:
            self._bytes += _nbytes(buffer)
        if buffer.is_cuda:
            start = _recorded_event()

            def done(future: torch.futures.Future[torch.Tensor]) -> torch.Tensor:
                end = _recorded_event()  # on a stream that waits for the all-reduce
                with self._lock:
                    self._cuda_spans.append((start, end))
                return future.value()

        else:
            started = time.perf_counter()

            def done(future: torch.futures.Future[torch.Tensor]) -> torch.Tensor:
                self._add_span(started, time.perf_counter(), 0)
                return future.value()

        return allreduce_hook(state, bucket).then(done)  # type: ignore[arg-type]

    def take(self) -> dict[str, float]:
        """Bytes and seconds since the last call; starts counting afresh."""
        with self._lock:
            nbytes, spans, cuda_spans = self._bytes, self._spans, self._cuda_spans
            self._bytes, self._spans, self._cuda_spans = 0, [], []
        seconds = _union(spans)
        if cuda_spans:
            origin = cuda_spans[0][0]  # any common origin: the union sorts the spans
            for _, end in cuda_spans:
                end.synchronize()
            seconds += _union(
                [
                    (origin.elapsed_time(s) / 1000, origin.elapsed_time(e) / 1000)
                    for s, e in cuda_spans
                ]
            )
        return {COMM_BYTES: float(nbytes), COMM_SECONDS: seconds}

    def _add_span(self, start: float, end: float, nbytes: int) -> None:
        with self._lock:
            self._bytes += nbytes
            self._spans.append((start, end))


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _recorded_event() -> torch.cuda.Event:
    event = torch.cuda.Event(enable_timing=True)
    event.record()
    return event


def _union(spans: list[tuple[float, float]]) -> float:
    """Total length covered by the spans (overlaps counted once)."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


# One per process, like the process group itself: the collectives in rl.distributed, the metric
# reductions and DDP's hook all count here, and the trainer takes it once a step.
COMM = CommMeter()
