"""Live recording of agent trajectories: proxies that record every exchange into crash-safe segment
files and store each closed session in the trajectory store.

* :mod:`worldforge.recording.segments` — :class:`~worldforge.recording.segments.SegmentLog`, the
  append-only, fsync'd segment files (``WAREHOUSE/recordings/segments/<kind>/<session_id>.jsonl``).
* :mod:`worldforge.recording.sink` — :class:`~worldforge.recording.sink.RecordingSink`: events in, a
  recording document (``WAREHOUSE/recordings/<kind>/<session_id>.json``) and its trajectory out.
* :mod:`worldforge.recording.openai_proxy` — ``worldforge record openai``, an OpenAI-compatible proxy.
"""
