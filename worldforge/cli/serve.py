"""``worldforge serve search``: the simulated search environment over HTTP and MCP."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from worldforge.cli._common import HostOpt, WarehouseOpt, err, port_opt, user_errors, warehouse_of

app = typer.Typer(help="Serve environments over HTTP and MCP.", no_args_is_help=True)


@app.command("search")
def search(
    world: Annotated[str, typer.Option("--world", help="The default world of new sessions.")],
    port: port_opt("WORLDFORGE_SEARCH_PORT") = None,
    host: HostOpt = None,
    idle_timeout: Annotated[Optional[float], typer.Option(help="Seconds before an idle session expires (default: WORLDFORGE_SESSION_IDLE_S).", show_default=False)] = None,
    record: Annotated[bool, typer.Option(help="Record closed sessions in the episode store WAREHOUSE/episodes/.")] = True,
    warehouse: WarehouseOpt = None,
) -> None:
    """Serve the simulated search environment: HTTP sessions at /sessions, MCP at /mcp."""
    from worldforge.serving.search import serve

    with user_errors():
        serve(world, warehouse_of(warehouse), host, port, idle_timeout=idle_timeout, record=record,
              on_ready=lambda url: err.print(f"serving {world}: {url}/sessions (HTTP), {url}/mcp (MCP)"))


@app.command("retrieve")
def retrieve(
    world: Annotated[str, typer.Option("--world", help="The world whose web is searched.")],
    port: port_opt("8000, as Search-R1's server") = None,
    host: HostOpt = None,
    perturbations: Annotated[Optional[str], typer.Option(help="none, default, a JSON schema, or an instruction in words.", show_default=False)] = None,
    seed: Annotated[int, typer.Option(help="Seed of every perturbation decision.")] = 0,
    scenario: Annotated[Optional[str], typer.Option(help="Search this scenario's corpus instead of the world's.", show_default=False)] = None,
    topk_max: Annotated[int, typer.Option("--topk-max", help="The largest topk a request may ask for.")] = 50,
    contents: Annotated[str, typer.Option(help="Document contents: page (title + page Markdown) or snippet.")] = "page",
    warehouse: WarehouseOpt = None,
) -> None:
    """Serve the Search-R1 / verl retrieval protocol: POST /retrieve {"queries", "topk", "return_scores"}."""
    from worldforge.rl.retrieve import serve_retrieve

    with user_errors():
        serve_retrieve(world, warehouse_of(warehouse), host, port, perturbations=perturbations, seed=seed, scenario=scenario,
                       contents=contents, topk_max=topk_max,  # type: ignore[arg-type]
                       on_ready=lambda url: err.print(f"serving {world}: {url} (Search-R1 / verl retrieval protocol)"))


@app.command("openenv")
def openenv(
    world: Annotated[Optional[str], typer.Option("--world", help="The world of a reset that names none.", show_default=False)] = None,
    port: port_opt("WORLDFORGE_OPENENV_PORT") = None,
    host: HostOpt = None,
    max_sessions: Annotated[int, typer.Option(help="Concurrent WebSocket sessions (one environment each).", min=1)] = 64,
    idle_timeout: Annotated[Optional[float], typer.Option(help="Seconds before an idle session is closed (default: WORLDFORGE_SESSION_IDLE_S).", show_default=False)] = None,
    record: Annotated[bool, typer.Option(help="Log finished episodes to WAREHOUSE/episodes.log.jsonl (agent openenv).")] = True,
    warehouse: WarehouseOpt = None,
) -> None:
    """Serve the RL environment with OpenEnv's conventions: WebSocket sessions at /ws for an OpenEnv EnvClient."""
    from worldforge.rl.env import world_tasks

    with user_errors():
        if world:
            world_tasks(world, warehouse_of(warehouse))  # a missing world fails fast, before openenv-core (seconds) is imported
        from worldforge.rl.openenv import serve as serve_openenv

        serve_openenv(world, warehouse_of(warehouse), host, port, max_sessions=max_sessions, idle_timeout=idle_timeout, record=record,
                      on_ready=lambda url: err.print(f"serving the OpenEnv environment{f' of {world}' if world else ''}: {url} (WebSocket {url.replace('http', 'ws', 1)}/ws)", soft_wrap=True))
