import type { ServerResponse } from 'node:http'

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Sends `value` as a complete JSON response. */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(value)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

/** Splits by code points, never inside a surrogate pair, as real servers do. */
export function pieces(text: string, size: number): string[] {
  const points = Array.from(text)
  const out: string[] = []
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''))
  return out
}

/** Writes and waits until the bytes are handed to the socket, so a later fault cannot overtake them. */
export async function write(res: ServerResponse, text: string, bytesPerWrite: number | undefined): Promise<void> {
  const bytes = Buffer.from(text, 'utf8')
  const size = bytesPerWrite || bytes.length
  for (let offset = 0; offset < bytes.length; offset += size) {
    await new Promise<void>((resolve) => res.write(bytes.subarray(offset, offset + size), () => resolve()))
  }
}
