import type { IncomingMessage } from 'node:http'

/** Which requests the HTTP endpoint answers, by their `Host` and `Origin` headers. */
export interface GuardOptions {
  /** The bind address: on a loopback address the loopback names are allowed by default. */
  host: string
  /** The port actually bound. */
  port: number
  /** More `Host` header values to accept (with or without a port), e.g. a name a reverse proxy forwards. */
  allowedHosts?: readonly string[]
  /** `Origin` header values (`scheme://host[:port]`) whose pages may call the endpoint. */
  allowedOrigins?: readonly string[]
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1'])

/** The `Host` header forms of a loopback endpoint: each name with and without the port, IPv6 in brackets. */
function loopbackHosts(port: number): string[] {
  return [...LOOPBACK].flatMap((host) => {
    const named = host.includes(':') ? `[${host}]` : host
    return [...new Set([host, named, `${named}:${port}`])]
  })
}

/** An origin as browsers serialise it: lower case, no trailing slash. */
function normalOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, '')
}

/**
 * Builds the check every request passes before anything else happens (no session, no body read):
 * - `Host` (DNS-rebinding protection): on a loopback bind only the loopback names are accepted, plus
 *   `allowedHosts`; on another bind, only `allowedHosts` when any are configured.
 * - `Origin`, a second layer: a request that carries one (every browser `fetch` of another origin does)
 *   must come from one of `allowedOrigins`, whatever its `Host`. Clients that are not browsers send no
 *   `Origin` and are not affected; `Origin: null` (sandboxed frames, files) is refused.
 * Returns why a request is refused (a model- and human-readable message), or undefined.
 */
export function requestGuard(options: GuardOptions): (req: IncomingMessage) => string | undefined {
  const configuredHosts = (options.allowedHosts ?? []).map((host) => host.toLowerCase())
  const hosts = LOOPBACK.has(options.host)
    ? new Set([...loopbackHosts(options.port), ...configuredHosts])
    : configuredHosts.length
      ? new Set(configuredHosts)
      : undefined
  const origins = new Set((options.allowedOrigins ?? []).map(normalOrigin))
  return (req) => {
    const host = req.headers.host
    if (hosts && (host === undefined || !hosts.has(host.toLowerCase()))) {
      return `MCP_HOST_REFUSED: Host ${JSON.stringify(host ?? '')} is not allowed (DNS-rebinding protection); address the server as ${[...hosts].find((each) => each.endsWith(`:${options.port}`)) ?? [...hosts][0]}, or list the name in allowedHosts`
    }
    const origin = req.headers.origin
    if (origin !== undefined && !origins.has(normalOrigin(origin))) {
      return `MCP_ORIGIN_REFUSED: Origin ${JSON.stringify(origin)} is not allowed; a browser page may call this server only from an origin listed in allowedOrigins`
    }
    return undefined
  }
}
