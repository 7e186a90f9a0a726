import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'

// The OTLP protobuf messages as generated from the official .proto files (the transformer package of
// the 0.20x line shipped them; later lines encode without a decoder). Test-only.
const require = createRequire(import.meta.url)
const { opentelemetry: proto } = require('otlp-proto-decoder/build/src/generated/root.js') as { opentelemetry: any }
const TraceRequest = proto.proto.collector.trace.v1.ExportTraceServiceRequest
const MetricsRequest = proto.proto.collector.metrics.v1.ExportMetricsServiceRequest

export type AttributeValue = string | number | boolean | AttributeValue[] | null
export type Attributes = Record<string, AttributeValue>

/** One exported span, the same whichever encoding carried it. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  attributes: Attributes
  events: { name: string; attributes: Attributes }[]
  status: { code: number; message: string }
  /** `service.name` and the other resource attributes of its batch. */
  resource: Attributes
  scope: string
}

/** One exported data point of a metric. */
export interface ReceivedPoint {
  metric: string
  unit: string
  attributes: Attributes
  /** Histograms: the count and sum; sums: the value. */
  count?: number
  sum?: number
  value?: number
  explicitBounds?: number[]
}

/** One export request as it arrived. */
export interface ReceivedRequest {
  path: string
  contentType: string
  /** The body as it came over the wire, for checks that a value appears nowhere. */
  raw: Buffer
}

/** A loopback OTLP/HTTP endpoint: accepts `/v1/traces` and `/v1/metrics` as protobuf or JSON and decodes them. */
export interface OtlpReceiver {
  url: string
  spans: ReceivedSpan[]
  points: ReceivedPoint[]
  requests: ReceivedRequest[]
  /** Resolves once `predicate` holds for what arrived (polled as requests come in). */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const points: ReceivedPoint[] = []
  const requests: ReceivedRequest[] = []
  const waiters = new Set<() => void>()
  const server: Server = createServer((request, response) => {
    void read(request).then(
      (raw) => {
        const contentType = String(request.headers['content-type'] ?? '')
        const json = contentType.startsWith('application/json')
        try {
          if (request.url === '/v1/traces') {
            const body = json ? JSON.parse(raw.toString('utf8')) : TraceRequest.toObject(TraceRequest.decode(raw), { longs: Number, bytes: Buffer })
            spans.push(...decodeSpans(body, json))
          } else if (request.url === '/v1/metrics') {
            const body = json ? JSON.parse(raw.toString('utf8')) : MetricsRequest.toObject(MetricsRequest.decode(raw), { longs: Number })
            points.push(...decodePoints(body))
          } else {
            response.writeHead(404).end()
            return
          }
        } catch (error) {
          response.writeHead(400, { 'content-type': 'text/plain' }).end(String(error))
          return
        }
        requests.push({ path: request.url, contentType, raw })
        response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '')
        for (const wake of waiters) wake()
      },
      () => response.writeHead(400).end(),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    points,
    requests,
    waitFor(predicate, timeoutMs = 30_000) {
      if (predicate()) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`the OTLP receiver did not get what was expected within ${timeoutMs} ms (${spans.length} spans, ${points.length} points)`))
        }, timeoutMs)
        const check = () => {
          if (!predicate()) return
          clearTimeout(timer)
          waiters.delete(check)
          resolve()
        }
        waiters.add(check)
      })
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

function read(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks)))
    request.on('error', reject)
  })
}

/** OTLP/JSON carries ids as hex strings; the protobuf decoding gives bytes. */
function hex(id: unknown): string {
  if (id === undefined || id === null) return ''
  if (typeof id === 'string') return id
  return Buffer.from(id as Uint8Array).toString('hex')
}

function anyValue(value: any): AttributeValue {
  if (!value) return null
  if ('stringValue' in value) return value.stringValue
  if ('boolValue' in value) return value.boolValue
  if ('intValue' in value) return Number(value.intValue)
  if ('doubleValue' in value) return Number(value.doubleValue)
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(anyValue)
  return null
}

function attributesOf(list: any[] | undefined): Attributes {
  const out: Attributes = {}
  for (const { key, value } of list ?? []) out[key] = anyValue(value)
  return out
}

function decodeSpans(body: any, json: boolean): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  for (const resourceSpans of body.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes)
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        out.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: json ? (span.parentSpanId ?? '') : hex(span.parentSpanId),
          name: span.name,
          kind: Number(span.kind ?? 0),
          attributes: attributesOf(span.attributes),
          events: (span.events ?? []).map((event: any) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
          status: { code: Number(span.status?.code ?? 0), message: span.status?.message ?? '' },
          resource,
          scope: scopeSpans.scope?.name ?? '',
        })
      }
    }
  }
  return out
}

function decodePoints(body: any): ReceivedPoint[] {
  const out: ReceivedPoint[] = []
  for (const resourceMetrics of body.resourceMetrics ?? []) {
    for (const scopeMetrics of resourceMetrics.scopeMetrics ?? []) {
      for (const metric of scopeMetrics.metrics ?? []) {
        for (const point of metric.histogram?.dataPoints ?? []) {
          out.push({
            metric: metric.name,
            unit: metric.unit ?? '',
            attributes: attributesOf(point.attributes),
            count: Number(point.count),
            sum: Number(point.sum),
            explicitBounds: (point.explicitBounds ?? []).map(Number),
          })
        }
        for (const point of metric.sum?.dataPoints ?? []) {
          out.push({ metric: metric.name, unit: metric.unit ?? '', attributes: attributesOf(point.attributes), value: Number(point.asInt ?? point.asDouble) })
        }
      }
    }
  }
  return out
}
