"""Prometheus metrics (prometheus_client), served at /metrics (contextweaver_site/monitoring.py).

Counters and histograms live in the process that counts them; with several server processes set
PROMETHEUS_MULTIPROC_DIR (an empty directory shared by them) so one scrape sums them all. What the
database knows (queue depth, mirror lag) is read at scrape time by `DatabaseCollector`.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

interactions_accepted = Counter("contextweaver_interactions_accepted", "New interactions stored by the agent API")
recall_seconds = Histogram("contextweaver_recall_seconds", "Time of one recall, from query to stored trace",
                           ["preset"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
websocket_clients = Gauge("contextweaver_websocket_clients", "Live-view websockets open", multiprocess_mode="livesum")


class DatabaseCollector(Collector):
    """Gauges read from PostgreSQL at scrape time: the job queue and the graph mirror."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from .health import mirror_check, queue_check

        queue = queue_check()
        jobs = GaugeMetricFamily("contextweaver_queue_jobs", "Jobs in the queue by status", labels=["status"])
        for status, count in sorted(queue["jobs"].items()):
            jobs.add_metric([status], count)
        yield jobs
        yield GaugeMetricFamily("contextweaver_queue_oldest_todo_seconds", "Age of the oldest job waiting to run",
                                value=queue["oldest_todo_seconds"])
        mirror = mirror_check()
        if mirror["enabled"]:
            yield GaugeMetricFamily("contextweaver_mirror_lag_changes", "Changes not yet in the graph mirror",
                                    value=mirror["lag_changes"])
