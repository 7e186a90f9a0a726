import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startHarness, type Harness } from './harness.js'

describe('the studio files as served', () => {
  let harness: Harness
  beforeAll(async () => {
    harness = await startHarness({
      store: { kind: 'jsonl' },
      assets: {
        'index.html': { contentType: 'text/html; charset=utf-8', body: '<!doctype html><title>studio</title><button>Allow</button>' },
        'app.js': { contentType: 'text/javascript; charset=utf-8', body: 'export {}' },
      },
    })
  })
  afterAll(() => harness?.close())

  it('may not be framed by any page (an approval cannot be clicked through another site)', async () => {
    for (const path of ['/', '/studio/app.js']) {
      const response = await harness.api(path)
      expect(response.status, path).toBe(200)
      expect(response.headers.get('content-security-policy'), path).toBe("frame-ancestors 'none'")
      expect(response.headers.get('x-frame-options'), path).toBe('DENY')
    }
  })
})
