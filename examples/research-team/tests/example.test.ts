import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

// A hang bound, not a timing: the example runs in seconds; a loaded machine may take several times that.
const HANG_MS = 120_000
const run = (env?: NodeJS.ProcessEnv) => promisify(execFile)('pnpm', ['start'], { cwd: root, encoding: 'utf8', timeout: HANG_MS, env })

describe('research-team example', () => {
  it(
    'fans out three structured subagents through a workflow and merges their summaries',
    async () => {
      const { stdout: output } = await run({ ...process.env, NO_COLOR: '1' })
      for (const area of ['auth', 'billing', 'search']) {
        expect(output).toContain(`┌ survey ${area}`)
        expect(output).toMatch(new RegExp(`└ survey ${area} completed \\(\\d+ ms\\)`))
      }
      expect(output).toContain('Merged report: 5 files surveyed; open TODOs:\n- auth: rate-limit failed attempts\n- billing: currency rounding')
      expect(output).toContain('== sessions: 3 child sessions linked to call_workflow; 3 replay exactly what their model saw')
      expect(output).toContain('cordage replay nests 3 child runs under the workflow call')
      expect(output).toContain('OK: three researchers reported validated summaries and the lead merged them')
    },
    HANG_MS + 10_000,
  )
})
