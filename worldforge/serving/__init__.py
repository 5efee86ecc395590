"""Serving: the one owner of an agent episode, and what every worldforge server shares.

* :mod:`worldforge.serving.episodes`: the episode service (:class:`~worldforge.serving.episodes.EpisodeService`):
  open an episode (world, task, scenario, seed, perturbations), step it, submit and reward its answer, close
  it and log it to the episode store, for every entry point — HTTP, MCP, ``/retrieve``, the in-process
  environment TRL and OpenEnv wrap, and the ``verifiers`` tool server;
* :mod:`worldforge.serving.search`: the search server, HTTP session routes and MCP tools over the service;
* :mod:`worldforge.serving.sessions`: one registry of open sessions, with idle expiry and a bound (the
  service's, and the recording proxies'; the OpenEnv server's WebSocket sessions are kept by the
  ``openenv`` library);
* :mod:`worldforge.serving.http`: the HTTP plumbing: a body size limit, JSON errors, bodies parsed
  and checked, JSON replies that never fail on a value.
"""
