import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadSession } from '../src/session-load.js'
import { SessionTail } from '../src/jsonl-tail.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const header = JSON.stringify({ type: 'session', version: 1, id: 's', createdAt: '2026-01-01T00:00:00.000Z', cwd: '/' })
const line = (seq: number) => JSON.stringify({ type: 'user/message', seq, time: '2026-01-01T00:00:00.000Z', data: { content: `m${seq}` } })

function file(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jsonl-tail-'))
  dirs.push(dir)
  const path = join(dir, 's.jsonl')
  writeFileSync(path, `${header}\n${line(1)}\n${line(2)}\n`)
  return path
}

describe('SessionTail (incremental follow reads of a session file)', () => {
  it('reads everything first, then only what was appended, whole lines only', async () => {
    const path = file()
    const tail = new SessionTail(path, () => loadSession(path))
    expect((await tail.readAfter(0)).map((event) => event.seq)).toEqual([1, 2])
    expect(await tail.readAfter(2)).toEqual([])
    // A line written in two pieces (another process mid-write) is read once it is whole.
    const third = line(3)
    appendFileSync(path, third.slice(0, 10))
    expect(await tail.readAfter(2)).toEqual([])
    appendFileSync(path, `${third.slice(10)}\n${line(4)}\n`)
    expect((await tail.readAfter(2)).map((event) => event.seq)).toEqual([3, 4])
    expect(await tail.readAfter(4)).toEqual([])
  })

  it('loads the file again when it got shorter (a torn tail cut before an append)', async () => {
    const path = file()
    const tail = new SessionTail(path, () => loadSession(path))
    await tail.readAfter(0)
    appendFileSync(path, '{"type":"user/mess')
    expect(await tail.readAfter(2)).toEqual([])
    truncateSync(path, Buffer.byteLength(`${header}\n${line(1)}\n`))
    // Shorter than what was consumed: re-read whole, and only what is after the cursor comes back.
    expect(await tail.readAfter(2)).toEqual([])
    expect((await tail.readAfter(0)).map((event) => event.seq)).toEqual([])
    appendFileSync(path, `${line(2)}\n${line(3)}\n`)
    expect((await tail.readAfter(2)).map((event) => event.seq)).toEqual([3])
  })
})
