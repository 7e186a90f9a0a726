import { describe, expect, it } from 'vitest'
import { Output } from '../src/output.js'
import { renderMarkdown, sanitize } from '../src/prompts.js'

const plain = new Output({ write: () => true } as never, { write: () => true } as never, { NO_COLOR: '1' })

describe('prompt text', () => {
  it('shows control characters from the model as escapes, keeping newlines and tabs', () => {
    expect(sanitize('ok\u001b[2J\u001b[1Ahidden\r\u0007\n\tnext\u009b')).toBe('ok\\x1b[2J\\x1b[1Ahidden\\x0d\\x07\n\tnext\\x9b')
  })

  it('renders a markdown plan for the terminal', () => {
    expect(renderMarkdown('# Fix the parser\nWhy: `parse` drops input.\n- add a test\n  2. run `pnpm test`', plain)).toBe(
      'Fix the parser\nWhy: `parse` drops input.\n• add a test\n  2. run `pnpm test`',
    )
  })
})
