"""toolgym's simulator: domains, compiled tools, isolated episodes, the MCP server.

Public surface: `load_domain`, `Domain`, `Episode`, and the error tree. A domain loaded here holds
task views (id, instruction, seed); the tasks' gold is the grading side's (`scoring.load_domain`).
The folders are the pipeline's stages, in order: `format` -> `plan` -> `codegen` -> `runtime` ->
`serve`, with `lang` (expressions) beneath; docs/architecture.md draws it.
"""

from typing import TYPE_CHECKING

from .lazy import lazy_exports

if TYPE_CHECKING:
    from .errors import (
        ErrorKind,
        InfraError,
        Problem,
        SessionError,
        SpecError,
        TaskError,
        ToolError,
        ToolgymError,
    )
    from .format.loader import list_domain_dirs, load_domain
    from .runtime.domain import Domain
    from .runtime.episode import Episode

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Domain": ".runtime.domain",
        "Episode": ".runtime.episode",
        "ErrorKind": ".errors",
        "InfraError": ".errors",
        "Problem": ".errors",
        "SessionError": ".errors",
        "SpecError": ".errors",
        "TaskError": ".errors",
        "ToolError": ".errors",
        "ToolgymError": ".errors",
        "list_domain_dirs": ".format.loader",
        "load_domain": ".format.loader",
    },
)

__all__ = [
    "Domain",
    "Episode",
    "ErrorKind",
    "InfraError",
    "Problem",
    "SessionError",
    "SpecError",
    "TaskError",
    "ToolError",
    "ToolgymError",
    "list_domain_dirs",
    "load_domain",
]
