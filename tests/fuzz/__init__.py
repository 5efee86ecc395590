"""Property-based fuzzing (Hypothesis) of the four inputs worldforge takes from outside.

Spec YAML, expressions, trajectory files and HTTP requests: any input either works or ends in
the project's own clear error (:class:`~worldforge.errors.WorldforgeError`, a quarantined record,
a 4xx JSON error), never a raw traceback, and within a bounded time. The budget (examples per
property) and the seed come from :mod:`tests.fuzz.budget`; ``make test`` runs the small fixed
budget, ``bench/fuzz.py`` the same properties with a larger one.
"""
