"""toolgym's simulator: domains, compiled tools, isolated episodes, the MCP server.

Public surface: `load_domain`, `Domain`, `Episode`, and the error tree.
"""

from .domain import Domain
from .episode import Episode
from .errors import (
    ErrorKind,
    InfraError,
    Problem,
    SessionError,
    SpecError,
    TaskError,
    ToolError,
    ToolgymError,
    TranscriptError,
)
from .loader import list_domain_dirs, load_domain

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
    "TranscriptError",
    "list_domain_dirs",
    "load_domain",
]
