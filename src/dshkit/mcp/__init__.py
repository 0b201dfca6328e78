"""dshkit as an MCP server: `server.build_server` (over the SDK's `MCPServer`), its tools in
`tools` (its registration with each harness is `dshkit.install`'s).

A surface: the handlers only translate to and from the capabilities. Nothing here is
imported on the hook path (the SDK is imported by `server` and `tools` only).
"""
