"""``worldforge record ...``: recording proxies that store live agent sessions as trajectories."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from worldforge.cli._common import HostOpt, WarehouseOpt, err, port_opt, user_errors, warehouse_of

app = typer.Typer(help="Record live agent sessions into the trajectory store.", no_args_is_help=True)


@app.command("openai")
def openai(
    upstream: Annotated[str, typer.Option("--upstream", help="The upstream's OpenAI API root, e.g. http://127.0.0.1:8000/v1.")],
    port: port_opt("8100") = None,
    host: HostOpt = None,
    idle_timeout: Annotated[float, typer.Option("--idle-timeout", help="Seconds without a request before a session is stored.")] = 300.0,
    warehouse: WarehouseOpt = None,
) -> None:
    """An OpenAI-compatible proxy (/v1/chat/completions, streaming or not; /v1/models) that records each
    conversation into WAREHOUSE/trajectories.duckdb (source record-openai) when it goes idle or the proxy stops."""
    from worldforge.recording.openai_proxy import serve_openai_proxy

    with user_errors():
        wh = warehouse_of(warehouse)
        serve_openai_proxy(upstream, wh, host, port, idle_timeout,
                           on_ready=lambda url: err.print(f"recording proxy: {url} -> {upstream} (recordings in {wh}/recordings/openai)"))


@app.command("mcp")
def mcp(
    upstream: Annotated[Optional[str], typer.Option("--upstream", help="The upstream MCP server's streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp.", show_default=False)] = None,
    command: Annotated[Optional[str], typer.Option("--command", help="Or: the upstream MCP server's command line, launched over stdio.", show_default=False)] = None,
    serve: Annotated[str, typer.Option("--serve", help="How agents reach the proxy: http (streamable HTTP, path /mcp) or stdio.")] = "http",
    port: port_opt("8101, with --serve http") = None,
    host: HostOpt = None,
    idle_timeout: Annotated[float, typer.Option("--idle-timeout", help="Seconds without a request before a session is stored.")] = 300.0,
    warehouse: WarehouseOpt = None,
) -> None:
    """An MCP proxy (official mcp SDK; streamable HTTP or stdio, both ways) that records tools/list and every
    tools/call into WAREHOUSE/trajectories.duckdb (source record-mcp) when a session ends, goes idle or the proxy stops."""
    from worldforge.recording.mcp_proxy import serve_mcp_proxy

    with user_errors():
        wh = warehouse_of(warehouse)
        serve_mcp_proxy(upstream, command, wh, serve, host, port, idle_timeout,
                        on_ready=lambda url: err.print(f"recording MCP proxy: {url} -> {upstream or command} (recordings in {wh}/recordings/mcp)"))
