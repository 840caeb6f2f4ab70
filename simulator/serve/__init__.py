"""Stage 5, serving: a domain's tools over MCP, one isolated episode per session.

`server` builds the app; `sessions` keeps one episode per session (`_serversessions`,
`_servercalls`); `mcptools` is the wire form of tools; `resends`, `labels` and `serving` are what a
client, a scorer and a launcher see. The rest are the HTTP and process plumbing (`_fastcall`,
`_httpguard`, `_handshakes`, `_mcprequest`, `_turns`, `_heap`). The pipeline: docs/architecture.md.
"""
