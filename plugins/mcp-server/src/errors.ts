import { CordageError } from '@cordage/core'

/** A second MCP server on this process's stdio would answer every request twice on the same stdout. */
export class McpStdioInUseError extends CordageError {
  constructor() {
    super(
      'MCP_STDIO_IN_USE',
      'this process already serves MCP on stdio, and a second server would answer every request twice on the same stdout; load one stdio server (`cordage mcp serve` serves the tools of cordage.yml itself: remove mcp-server from cordage.yml, or give it transport: http)',
    )
  }
}
