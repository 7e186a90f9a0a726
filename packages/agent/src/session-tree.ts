import { closeSync, openSync, readSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { SessionHeader } from './session-types.js'

/** Reads the header line of a session file, or undefined when it has none that parses. */
export function readHeader(file: string): SessionHeader | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return undefined
  }
  try {
    // A header is one short line; 64 KiB holds any that a real session writes.
    const buffer = Buffer.alloc(65_536)
    const read = readSync(fd, buffer, 0, buffer.length, 0)
    const end = buffer.subarray(0, read).indexOf(10)
    if (end < 0) return undefined
    const header = JSON.parse(buffer.subarray(0, end).toString('utf8')) as SessionHeader
    return header?.type === 'session' ? header : undefined
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

/**
 * The child sessions of session `parentId` kept beside `file` (runs started by its subagent, workflow or
 * ralph calls), grouped by the call that started them, oldest first.
 */
export function childSessionFiles(file: string, parentId: string): Map<string, string[]> {
  const dir = dirname(file)
  const children: Array<{ callId: string; createdAt: string; file: string }> = []
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return new Map()
  }
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue
    const path = join(dir, name)
    if (path === file) continue
    const header = readHeader(path)
    if (header?.parent?.session === parentId) children.push({ callId: header.parent.callId, createdAt: header.createdAt, file: path })
  }
  children.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.file < b.file ? -1 : 1))
  const byCall = new Map<string, string[]>()
  for (const child of children) byCall.set(child.callId, [...(byCall.get(child.callId) ?? []), child.file])
  return byCall
}
