"""Live recordings as runs: the ``closed_recordings`` sensor (``worldforge record openai|mcp``).

A recording proxy stores each closed session in the trajectory store itself; the sensor makes
every newly closed recording visible in Dagster as one run of ``recorded_sessions``, which
recomputes ``turn_mask_stats`` over the store (line surprisal is a whole-corpus statistic, so a
new trajectory shifts every turn's value a little).
"""

import json

from dagster import AssetSelection, DefaultSensorStatus, RunRequest, SensorEvaluationContext, SkipReason, define_asset_job, sensor

from assets.resources import WarehouseResource
from worldforge.recording.sink import stored_recordings
from worldforge.settings import get_settings
from worldforge.trajectories.model import Trajectory
from worldforge.trajectories.readers import read_file

recorded_sessions_job = define_asset_job(
    "recorded_sessions", selection=AssetSelection.assets("turn_mask_stats"),
    description="A recording proxy stored a session: recompute the loss-mask statistics over the store.",
)


def _recording_tags(path) -> dict[str, str]:
    """``turns`` (0 when quarantined) and ``source`` or ``quarantined`` (the reason) of one recording file."""
    for rec in read_file(path, max_record_mb=get_settings().max_record_mb):
        if isinstance(rec, Trajectory):
            return {"turns": str(len(rec.turns)), "source": rec.source, "domain": rec.domain}
        return {"turns": "0", "quarantined": rec.reason[:200]}
    return {"turns": "0"}


@sensor(job=recorded_sessions_job, minimum_interval_seconds=30, default_status=DefaultSensorStatus.STOPPED)
def closed_recordings(context: SensorEvaluationContext, warehouse: WarehouseResource):
    """One run per recording closed since the last evaluation (run key ``<kind>/<session_id>``).

    The cursor holds the newest modification time seen and the recordings that carry it, so
    each recording is requested once however many accumulate.
    """
    cursor = json.loads(context.cursor) if context.cursor else {"mtime_ns": -1, "keys": []}
    last, keys = cursor["mtime_ns"], set(cursor["keys"])
    new = [r for r in stored_recordings(warehouse.get()) if r.mtime_ns > last or (r.mtime_ns == last and f"{r.kind}/{r.session_id}" not in keys)]
    if not new:
        return SkipReason("no recording closed since the last evaluation")
    top = max(r.mtime_ns for r in new)
    seen = {f"{r.kind}/{r.session_id}" for r in new if r.mtime_ns == top} | (keys if top == last else set())
    context.update_cursor(json.dumps({"mtime_ns": top, "keys": sorted(seen)}))
    return [RunRequest(run_key=f"{r.kind}/{r.session_id}",
                       tags={"trigger": "recording", "recorder": r.kind, "session": r.session_id, **_recording_tags(r.path)})
            for r in new]

