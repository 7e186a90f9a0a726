import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

// A hang bound, not a timing: the example runs in seconds; a loaded machine may take several times that.
const HANG_MS = 120_000
const run = (env?: NodeJS.ProcessEnv) => promisify(execFile)('pnpm', ['start'], { cwd: root, encoding: 'utf8', timeout: HANG_MS, env })

describe('basic-tools example', () => {
  it(
    'runs, prints values and content, and unregisters on unload',
    async () => {
      const { stdout: output } = await run()
      expect(output).toContain('tools: sort_numbers, word_count')
      expect(output).toContain('model sees: 13 words, 2 lines, 69 characters (longest word: "returns")')
      expect(output).toContain('program gets: [1,2,3] (frozen: true)')
      expect(output).toContain('model sees: Error: invalid arguments for sort_numbers:')
      expect(output).toContain('error code: UNKNOWN_TOOL')
      expect(output).toContain('after unloading the plugin: 0 tools registered')
    },
    HANG_MS + 10_000,
  )
})
