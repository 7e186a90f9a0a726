import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

describe('code-mode example', () => {
  it('runs a scripted agent whose program greps, reads and aggregates typed values', () => {
    const output = execFileSync('pnpm', ['start'], { cwd: root, encoding: 'utf8' })
    expect(output).toContain('run_code description includes the SDK: true')
    expect(output).toContain('matched 3 lines in 2 files')
    expect(output).toContain('"ada": [\n      "src/client.ts:1 make configurable",\n      "src/server.ts:2 handle SIGTERM"\n    ]')
    expect(output).toContain('session log: 3 tool/code-dispatch events: 0:grep, ')
    expect(output).toContain('OK: the program received typed, frozen values and the session log holds only rendered content')
  })
})
