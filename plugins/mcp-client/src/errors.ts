import { CordageError } from '@cordage/core'

/** The MCP server answered the call with `isError: true`; the message is the server's text. */
export class McpToolError extends CordageError {
  constructor(message: string) {
    super('MCP_TOOL_ERROR', message)
  }
}

/** The server is not connected (starting, crashed or reconnecting), so the call was not sent. */
export class McpUnavailableError extends CordageError {
  constructor(server: string, detail?: string) {
    super('MCP_UNAVAILABLE', `the MCP server "${server}" is not connected${detail ? ` (${detail})` : ''}; it is being reconnected, retry the call later`)
  }
}

/** The connection dropped while the call was in flight; the server may or may not have run it. */
export class McpDisconnectedError extends CordageError {
  constructor(server: string) {
    super('MCP_DISCONNECTED', `the MCP server "${server}" disconnected during the call (it may or may not have run); it is being reconnected, retry later`)
  }
}

/** The server rejected the request at the protocol level (JSON-RPC error), e.g. unknown tool or bad params. */
export class McpProtocolError extends CordageError {
  constructor(
    message: string,
    readonly rpcCode?: number,
  ) {
    super('MCP_PROTOCOL_ERROR', message)
  }
}

/** The plugin config is invalid (a developer-facing error thrown at load). */
export class McpConfigError extends CordageError {
  constructor(message: string) {
    super('INVALID_CONFIG', message)
  }
}
