"""Execution traces: host-observed region intervals in Chrome/Perfetto format."""

from __future__ import annotations

import json
from pathlib import Path

_LANES = ["upload", "compute", "download", "npu", "host"]


class Trace:
    """Regions executed between ``rt.start_trace()`` and ``rt.finish_trace()``.

    ``events`` is a list of dicts with ``lane``, ``op``, ``start_us``,
    ``duration_us``, ``bytes``, ``failed``, ``submission`` and ``region``, and
    ``detail`` for array operations whose full description says more than
    ``op``; ``dropped`` counts the oldest events dropped beyond the capacity.
    ``op`` names what ran: the array operation (``"matmul"``, ``"exp"``,
    ``"add.reduce"``, ``"astype"``, ``"copy"``) or the graph entries of the
    region (``"copy x2, gpu(transform_i32)"``, ``"npu(batched_gemm)"``), so a
    matmul that ran on the ``compute`` lane instead of ``npu`` shows. Times are
    host-observed region latencies, not device timestamps.
    """

    def __init__(self, events, dropped=0):
        self.events = list(events)
        self.dropped = int(dropped)

    def __len__(self):
        return len(self.events)

    def __repr__(self):
        return f"Trace({len(self.events)} events, dropped={self.dropped})"

    def to_json(self) -> str:
        """Chrome/Perfetto trace JSON: one "X" event per region named by its operation, the lane as thread."""
        trace_events = [
            {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "hrxarray runtime (host-observed)"}}
        ]
        for tid, lane in enumerate(_LANES):
            trace_events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": lane}})
        for e in self.events:
            args = {"op": e["op"], "lane": e["lane"], "region": e["region"], "bytes": e["bytes"],
                    "failed": e["failed"], "submission": e["submission"]}
            if "detail" in e:
                args["detail"] = e["detail"]
            trace_events.append(
                {
                    "name": e["op"] + (" (failed)" if e["failed"] else ""),
                    "ph": "X",
                    "pid": 1,
                    "tid": _LANES.index(e["lane"]),
                    "ts": e["start_us"],
                    "dur": e["duration_us"],
                    "args": args,
                }
            )
        return json.dumps(
            {
                "traceEvents": trace_events,
                "displayTimeUnit": "ms",
                "otherData": {
                    "note": "host-observed region latencies measured by the runtime's lane threads, "
                    "not device timestamps",
                    "dropped": self.dropped,
                },
            }
        )

    def save(self, path) -> None:
        """Write to_json() to path."""
        Path(path).write_text(self.to_json())
