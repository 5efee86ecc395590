"""The episode's tool surface, declared once: ``web_search``, ``web_extractor``, ``dict_memory``, ``submit``.

Every adapter derives its tools from :data:`EPISODE_TOOLS` instead of writing them again:

* the OpenAI function-tool JSON schemas (:meth:`Tool.openai_schema`), which the HTTP server's
  ``/tools``, the OpenEnv action and observation, and the rendered tool list use;
* the MCP server's tools (:meth:`Tool.function`, with the parameters' descriptions as
  ``pydantic.Field`` metadata, which the ``mcp`` SDK turns into the input schema);
* TRL's tool methods (:meth:`Tool.method`): a typed signature and a Google-style docstring, which
  ``transformers.utils.get_json_schema`` turns back into the same schema.

The names and argument formats are those of the Qwen-AgentWorld search domain (DESIGN.md §4);
``submit`` ends an episode with the answer (a Markdown table for wide tasks).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

__all__ = ["DICT_MEMORY", "EPISODE_TOOLS", "SEARCH_TOOLS", "SUBMIT", "Param", "Tool", "WEB_EXTRACTOR", "WEB_SEARCH"]

_JSON_TYPES: dict[Any, dict] = {str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"},
                                bool: {"type": "boolean"}, dict: {"type": "object"}, list[str]: {"type": "array", "items": {"type": "string"}}}


@dataclass(frozen=True)
class Param:
    """One argument of a tool.

    Attributes:
        name: the argument's name in the call's ``arguments`` object.
        type: its Python type, one of ``str``, ``int``, ``float``, ``bool``, ``dict``, ``list[str]``.
        description: one sentence for the agent.
        required: the call must give it (otherwise it defaults to ``None``: left out of the call).
        enum: the values allowed, when a closed set.
        minimum: the smallest value allowed (integers).
    """

    name: str
    type: Any
    description: str
    required: bool = False
    enum: tuple[str, ...] = ()
    minimum: int | None = None

    def json_schema(self) -> dict:
        """The argument's JSON schema (``type``, ``items``, ``enum``, ``minimum``, ``description``)."""
        schema = dict(_JSON_TYPES[self.type])
        if self.enum:
            schema["enum"] = list(self.enum)
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        schema["description"] = self.description
        return schema

    def field(self) -> Any:
        """``pydantic.Field`` metadata carrying the description, enum and minimum into a pydantic
        JSON schema (as schema only: a value outside them reaches the environment, whose error
        observation says what is allowed)."""
        extra = {k: v for k, v in (("enum", list(self.enum) or None), ("minimum", self.minimum)) if v is not None}
        return Field(description=self.description, json_schema_extra=extra or None)

    def annotation(self) -> Any:
        """The Python annotation of the argument (``T`` when required, else ``T | None``)."""
        return self.type if self.required else self.type | None


@dataclass(frozen=True)
class Tool:
    """One tool of the episode.

    Attributes:
        name: the tool's name (``web_search`` ...).
        description: what it does, as every adapter shows it.
        params: its arguments, in order.
        returns: what the observation holds (the ``Returns:`` line of generated docstrings).
    """

    name: str
    description: str
    params: tuple[Param, ...]
    returns: str

    def openai_schema(self) -> dict:
        """The OpenAI function-tool schema: ``{"type": "function", "function": {"name", "description", "parameters"}}``."""
        parameters: dict[str, Any] = {"type": "object", "properties": {p.name: p.json_schema() for p in self.params}}
        required = [p.name for p in self.params if p.required]
        if required:
            parameters["required"] = required
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": parameters}}

    def arguments(self, values: dict[str, Any]) -> dict[str, Any]:
        """The call's ``arguments`` object: the declared arguments of ``values`` that are not ``None``, in order."""
        return {p.name: values[p.name] for p in self.params if values.get(p.name) is not None}

    def docstring(self) -> str:
        """A Google-style docstring (description, ``Args:`` with ``(choices: [...])`` for enums, ``Returns:``),
        the shape ``transformers.utils.get_json_schema`` parses."""
        lines = [self.description, "", "Args:"]
        for p in self.params:
            choices = f" (choices: [{', '.join(repr(v).replace(chr(39), chr(34)) for v in p.enum)}])" if p.enum else ""
            lines.append(f"    {p.name}: {p.description}{choices}")
        lines += ["", "Returns:", f"    {self.returns}"]
        return "\n".join(lines)

    def signature(self, leading: Sequence[inspect.Parameter] = (), trailing: Sequence[inspect.Parameter] = (),
                  returns: Any = str, described: bool = False) -> inspect.Signature:
        """The Python signature: ``leading`` parameters (``self``, an MCP context), the declared
        arguments (keyword-or-positional; optional ones default to ``None``), then ``trailing`` ones.

        Args:
            described: annotate each argument ``Annotated[T, Field(description=...)]`` (pydantic
                reads the description into the input schema, as the ``mcp`` SDK does).
        """
        declared = [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                      annotation=Annotated[p.annotation(), p.field()] if described else p.annotation(),
                                      default=inspect.Parameter.empty if p.required else None) for p in self.params]
        return inspect.Signature([*leading, *declared, *trailing], return_annotation=returns)

    def _finish(self, fn: Callable, sig: inspect.Signature, owner: type | None = None) -> Callable:
        fn.__name__ = self.name
        fn.__qualname__ = f"{owner.__qualname__}.{self.name}" if owner is not None else self.name
        if owner is not None:  # so that pickle finds the method where it is installed
            fn.__module__ = owner.__module__
        fn.__doc__ = self.docstring()
        fn.__signature__ = sig  # type: ignore[attr-defined]
        fn.__annotations__ = {name: p.annotation for name, p in sig.parameters.items() if p.annotation is not inspect.Parameter.empty}
        fn.__annotations__["return"] = sig.return_annotation
        return fn

    def method(self, call: Callable[[Any, str, dict[str, Any]], Any], returns: Any = str, owner: type | None = None) -> Callable:
        """A method ``(self, <arguments>) -> returns`` that answers ``call(self, name, arguments)``.

        Its signature, annotations and docstring are this declaration's (TRL reads tools off them).

        Args:
            owner: the class the method is installed on (its ``__qualname__`` and ``__module__`` then
                name it there, so it pickles by reference like a written method).
        """
        sig = self.signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)], returns=returns)

        def method(self_: Any, *args: Any, **kwargs: Any) -> Any:
            bound = sig.bind(self_, *args, **kwargs)
            return call(self_, self.name, self.arguments(bound.arguments))

        return self._finish(method, sig, owner)

    def function(self, call: Callable[..., Any], leading: Sequence[inspect.Parameter] = (),
                 trailing: Sequence[inspect.Parameter] = ()) -> Callable:
        """A function ``(<leading>, <arguments>, <trailing>) -> str`` that answers
        ``call(name, arguments, **leading_and_trailing)``; its arguments carry their descriptions
        (``Annotated[..., Field(description=...)]``) for an input schema built by pydantic.
        """
        sig = self.signature(leading, trailing, described=True)
        extra = [p.name for p in (*leading, *trailing)]

        def function(*args: Any, **kwargs: Any) -> Any:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            return call(self.name, self.arguments(bound.arguments), **{k: bound.arguments[k] for k in extra})

        return self._finish(function, sig)


WEB_SEARCH = Tool(
    "web_search", "Search the web. Returns 10 results per query, each with its URL, title, snippet and date.",
    (Param("query", str, "One search query."),
     Param("queries", list[str], "Several search queries at once (instead of query)."),
     Param("page", int, "Result page, 1 for the first ten results.", minimum=1)),
    "The results as text ([n] URL, Title, Snippet, Date), or a message starting with Error.",
)
WEB_EXTRACTOR = Tool(
    "web_extractor", "Fetch a web page and return its content as Markdown.",
    (Param("url", str, "The page's URL, as listed by web_search.", required=True),),
    "The page's text, or a message starting with Error (an unknown URL is a 404).",
)
DICT_MEMORY = Tool(
    "dict_memory", "A key-value memory for notes during the episode: add, update, retrieve, retrieve_all, remove, remove_all.",
    (Param("operation", str, "What to do with the memory.", required=True,
           enum=("add", "update", "retrieve", "retrieve_all", "remove", "remove_all")),
     Param("dict", dict, "The entries to add or update (key to value)."),
     Param("key_list", list[str], "The keys to retrieve or remove.")),
    "What the memory did or holds, or a message starting with Error.",
)
SUBMIT = Tool(
    "submit", "Submit the final answer and end the episode. Call it once, when you have the answer.",
    (Param("answer", str, "One Markdown table with the columns the question asks for, one row per item; or, for a question with "
           "one answer, the response in the format it asks for (Explanation, Exact Answer, Confidence).", required=True),),
    "A short acknowledgement (the score is not shown), or a message starting with Error.",
)

SEARCH_TOOLS: tuple[Tool, ...] = (WEB_SEARCH, WEB_EXTRACTOR, DICT_MEMORY)
"""The tools the search environment answers (:class:`~worldforge.simenv.env.SearchEnv`)."""
EPISODE_TOOLS: tuple[Tool, ...] = (*SEARCH_TOOLS, SUBMIT)
"""The tools of an RL episode: the search tools and ``submit``."""

