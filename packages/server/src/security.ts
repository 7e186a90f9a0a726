import { createHash, timingSafeEqual } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import { ServerError } from './errors.js'

/** Addresses that only this machine can reach. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || bare === '::ffff:127.0.0.1'
}

/** The `Host` values a request to `host:port` may carry: the bound name, and the loopback names for a loopback bind. */
export function allowedHosts(host: string, port: number): Set<string> {
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  const names = new Set([`${bracketed}:${port}`.toLowerCase()])
  if (isLoopback(host)) for (const name of ['localhost', '127.0.0.1', '[::1]']) names.add(`${name}:${port}`)
  return names
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

/**
 * Refuses requests whose `Host` is not the bound address (DNS rebinding), whose `Origin` (when sent) is
 * another site, and, with a token, `/api/*` requests without `Authorization: Bearer <token>`.
 */
export function guard(options: { hosts: () => Set<string>; token?: string }): MiddlewareHandler {
  const expected = options.token === undefined ? undefined : digest(options.token)
  return async (c, next) => {
    const hosts = options.hosts()
    const host = c.req.header('host')?.toLowerCase()
    if (!host || !hosts.has(host))
      throw new ServerError('HOST_REFUSED', `Host ${JSON.stringify(host ?? '')} is not this server's address; use ${[...hosts][0]}`)
    const origin = c.req.header('origin')
    if (origin !== undefined && !sameOrigin(origin, hosts))
      throw new ServerError('ORIGIN_REFUSED', `requests from origin ${JSON.stringify(origin)} are refused; only pages served by this server may call it`)
    if (expected && c.req.path.startsWith('/api/')) {
      const match = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')
      if (!match || !timingSafeEqual(digest(match[1]), expected)) {
        c.header('WWW-Authenticate', 'Bearer')
        throw new ServerError('UNAUTHORIZED', 'this server needs a bearer token: send Authorization: Bearer <token>')
      }
    }
    await next()
  }
}

function sameOrigin(origin: string, hosts: Set<string>): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  const port = url.port || (url.protocol === 'https:' ? '443' : '80')
  return url.protocol === 'http:' && hosts.has(`${url.hostname}:${port}`.toLowerCase())
}
