import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage } from 'node:http'
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { pipeline, type Readable, type Transform } from 'node:stream'
import type { AddressPolicy } from './address.js'
import { WebError } from './errors.js'

/** Limits of one fetch, redirects included. */
export interface FetchLimits {
  maxBytes: number
  maxRedirects: number
  userAgent: string
}

/** The connection side of the fetcher: the address policy and the plugin's agents. */
export interface Transport {
  policy: AddressPolicy
  agents: { http: HttpAgent; https: HttpsAgent }
}

/** A response as received: final URL after redirects, status, raw (decompressed) body bytes up to the cap. */
export interface RawResponse {
  /** The requested URL, normalised. */
  url: string
  finalUrl: string
  status: number
  contentType: string
  body: Buffer
  truncated: boolean
}

const MAX_URL_LENGTH = 2048
const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** Parses and checks a URL the model asked for (or a redirect target). */
export function checkUrl(input: string, base?: string): URL {
  let url: URL
  try {
    url = new URL(input, base)
  } catch {
    throw new WebError('WEB_INVALID_URL', `${JSON.stringify(input.slice(0, 200))} is not a valid URL; pass an absolute http:// or https:// URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebError('WEB_INVALID_URL', `unsupported URL scheme "${url.protocol}" (only http and https are allowed)`)
  }
  if (url.href.length > MAX_URL_LENGTH)
    throw new WebError('WEB_INVALID_URL', `the URL is ${url.href.length} characters long; at most ${MAX_URL_LENGTH} are allowed`)
  if (url.username || url.password) throw new WebError('WEB_BLOCKED_URL', 'credentials in URLs are not allowed; fetch the URL without user:password@')
  return url
}

function blocked(url: URL, host: string, addresses: string[], reason: string): WebError {
  const via = addresses.length === 1 && addresses[0] === host ? '' : ` (it resolves to ${addresses.join(', ')})`
  return new WebError(
    'WEB_BLOCKED_ADDRESS',
    `refused to fetch ${url.origin}: ${host}${via} is ${/^(?:[aeio]|un[^i]|IPv4|ISATAP)/i.test(reason) ? 'an' : 'a'} ${reason}, and web_fetch only reaches public addresses`,
  )
}

/**
 * A DNS lookup that resolves once and hands the socket only addresses the policy allows, so the address
 * checked is the address connected to (no second resolution an attacker's DNS could answer differently).
 */
function guardedLookup(policy: AddressPolicy, url: URL): LookupFunction {
  return ((hostname: string, options: { family?: number; hints?: number; all?: boolean }, callback: (...args: any[]) => void) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error)
      const allowed = addresses.filter((entry) => !policy.refusal(entry.address))
      if (!allowed.length) {
        const reason = policy.refusal(addresses[0]!.address) ?? 'refused address'
        return callback(
          blocked(
            url,
            hostname,
            addresses.map((entry) => entry.address),
            reason,
          ),
        )
      }
      if (options.all) callback(null, allowed)
      else callback(null, allowed[0]!.address, allowed[0]!.family)
    })
  }) as LookupFunction
}

const DECODERS: Record<string, () => Transform> = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate, br: createBrotliDecompress }
// Stacked codings are legal but rare (one is usual, two happen); more is a decompression maze.
const MAX_CODINGS = 3

/** The body with every `Content-Encoding` layer undone, last applied first; unknown codings are refused. */
function decoded(response: IncomingMessage): Readable {
  const header = String(response.headers['content-encoding'] ?? '')
  const codings = header
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding && coding !== 'identity')
  const unknown = codings.find((coding) => !Object.hasOwn(DECODERS, coding))
  if (unknown !== undefined || codings.length > MAX_CODINGS) {
    throw new WebError(
      'WEB_UNSUPPORTED_ENCODING',
      `the response is encoded as ${JSON.stringify(header.slice(0, 100))}; web_fetch decodes gzip, deflate and br, at most ${MAX_CODINGS} layers`,
    )
  }
  if (!codings.length) return response
  // pipeline, unlike pipe, passes an error in any layer (or the socket) on to the last stream, where it is read.
  const layers = codings.reverse().map((coding) => DECODERS[coding]!())
  pipeline([response, ...layers], () => {})
  return layers[layers.length - 1]!
}

/** Reads at most `maxBytes` of the (decompressed) body, then stops the transfer. */
async function readCapped(response: IncomingMessage, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = []
  let size = 0
  let stream: Readable = response
  try {
    stream = decoded(response)
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size))
        return { body: Buffer.concat(chunks), truncated: true }
      }
      chunks.push(chunk)
      size += chunk.length
    }
  } finally {
    // Ends the transfer (and the decompressors) when the cap was reached or reading failed.
    if (stream !== response) stream.destroy()
    response.destroy()
  }
  return { body: Buffer.concat(chunks), truncated: false }
}

function send(url: URL, transport: Transport, limits: FetchLimits, signal: AbortSignal): Promise<IncomingMessage> {
  const secure = url.protocol === 'https:'
  return new Promise((resolve, reject) => {
    const request = (secure ? httpsRequest : httpRequest)(
      url,
      {
        agent: secure ? transport.agents.https : transport.agents.http,
        lookup: guardedLookup(transport.policy, url),
        signal,
        headers: {
          'user-agent': limits.userAgent,
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
        },
      },
      resolve,
    )
    request.on('error', reject)
    request.end()
  })
}

/** GETs `input`, following up to `maxRedirects` redirects, checking every hop's address before connecting. */
export async function fetchRaw(input: string, transport: Transport, limits: FetchLimits, signal: AbortSignal): Promise<RawResponse> {
  let url = checkUrl(input)
  const requested = url.href
  for (let hop = 0; ; hop++) {
    const host = url.hostname.replace(/^\[|\]$/g, '')
    // Node connects to IP literals without a lookup, so they are checked here.
    if (isIP(host)) {
      const reason = transport.policy.refusal(host)
      if (reason) throw blocked(url, host, [host], reason)
    }
    const response = await send(url, transport, limits, signal)
    const location = response.headers.location
    if (REDIRECTS.has(response.statusCode ?? 0) && location) {
      response.destroy()
      if (hop >= limits.maxRedirects) {
        throw new WebError(
          'WEB_TOO_MANY_REDIRECTS',
          `exceeded the maximum of ${limits.maxRedirects} redirects (last hop: ${url.href} → ${location.slice(0, 200)})`,
        )
      }
      url = checkUrl(location, url.href)
      continue
    }
    const { body, truncated } = await readCapped(response, limits.maxBytes)
    const contentType = String(response.headers['content-type'] ?? '')
    return { url: requested, finalUrl: url.href, status: response.statusCode ?? 0, contentType, body, truncated }
  }
}
