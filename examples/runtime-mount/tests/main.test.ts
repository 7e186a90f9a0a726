import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

// A hang bound, not a timing: the example runs in seconds; a loaded machine may take several times that.
const HANG_MS = 120_000
const run = (env?: NodeJS.ProcessEnv) => promisify(execFile)('pnpm', ['start'], { cwd: root, encoding: 'utf8', timeout: HANG_MS, env })

describe('runtime-mount example', () => {
  it(
    'mounts a tool, calls it directly and from run_code, unmounts it, and the tool list and SDK come back',
    async () => {
      const { stdout: output } = await run()
      expect(output).toContain('result cordis_mount: Temporary plugin dyn-1 is active (plugin "shouting";')
      expect(output).toContain('result shout: HELLO!')
      expect(output).toContain('run_code dispatched: shout, shout, shout')
      expect(output).toContain('result cordis_unmount: Temporary plugin dyn-1 ("shouting") was unmounted.')
      expect(output).toContain('result shout: Error: unknown tool "shout"')
      expect(output).toContain('tools before: cordis_inspect, cordis_mount, cordis_unmount, run_code\n')
      expect(output).toContain('tools mounted: cordis_inspect, cordis_mount, cordis_unmount, run_code, shout\n')
      expect(output).toContain('tools after: cordis_inspect, cordis_mount, cordis_unmount, run_code\n')
      expect(output).toContain('run_code SDK names shout: before false, mounted true, after false')
      expect(output).toContain('run_code SDK after unmount equals the one before mount: true')
      expect(output).toContain('OK: the tool list and the run_code SDK changed with the mount and came back after the unmount')
    },
    HANG_MS + 10_000,
  )
})
