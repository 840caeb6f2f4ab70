"""Ingest: API specs and tool files → `RawOperation`s and `FailedFile`s.

Formats: OpenAPI 3.0 / 3.1 and Swagger 2.0 (JSON, YAML; multi-file), OpenAI / Anthropic / plain
function lists, BFCL, ToolBench, Gorilla API-zoo, MCP `tools/list` results and catalogues. Parsing
is PyYAML's C loader and the json module (yamlload.py); `$ref`s are resolved lazily by our own
resolver (refs.py, why there); operations are read by openapi.py and functions.py; files,
archives, bounds and worker processes are files.py.
"""

from toolgen.ingest.files import FileResult, IngestStats, read_file, read_one, read_paths

__all__ = ["FileResult", "IngestStats", "read_file", "read_one", "read_paths"]
