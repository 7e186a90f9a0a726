import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

// A hang bound, not a timing: the example runs in seconds; a loaded machine may take several times that.
const HANG_MS = 120_000
const run = (env?: NodeJS.ProcessEnv) => promisify(execFile)('pnpm', ['start'], { cwd: root, encoding: 'utf8', timeout: HANG_MS, env })

describe('code-mode example', () => {
  it(
    'runs a scripted agent whose program greps, reads and aggregates typed values',
    async () => {
      const { stdout: output } = await run()
      expect(output).toContain('run_code description includes the SDK: true')
      expect(output).toContain('matched 3 lines in 2 files')
      expect(output).toContain('"ada": [\n      "src/client.ts:1 make configurable",\n      "src/server.ts:2 handle SIGTERM"\n    ]')
      expect(output).toContain('session log: 3 tool/code-dispatch events: 0:grep, ')
      expect(output).toContain('OK: the program received typed, frozen values and the session log holds only rendered content')
    },
    HANG_MS + 10_000,
  )
})
