"""Serving: what every worldforge server shares (the search server, Search-R1's ``/retrieve`` and
the recording proxies; the OpenEnv server's WebSocket sessions are kept by the ``openenv`` library).

* :mod:`worldforge.serving.sessions`: one registry of open sessions, with idle expiry and a bound;
* :mod:`worldforge.serving.http`: the HTTP plumbing: a body size limit, JSON errors, bodies parsed
  and checked, JSON replies that never fail on a value.
"""
