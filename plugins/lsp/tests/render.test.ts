import { describe, expect, it } from 'vitest'
import { displayUri, renderLsp } from '../src/render.js'
import { toDiagnostics, toHover, toLocations, toSymbols } from '../src/results.js'

const root = 'file:///work/project'
const range = (line: number, character = 0) => ({ start: { line, character }, end: { line, character: character + 1 } })

describe('lsp results and rendering', () => {
  it.each([
    ['file:///work/project/src/a.ts', 'src/a.ts'],
    ['file:///work/project/dir%20with%20space/b.ts', 'dir with space/b.ts'],
    ['file:///work/projectile/c.ts', '/work/projectile/c.ts'],
    ['file:///usr/lib/x.d.ts', '/usr/lib/x.d.ts'],
    ['untitled:Untitled-1', 'untitled:Untitled-1'],
    ['file:///work/project/%E0%A4%A', 'file:///work/project/%E0%A4%A'],
  ])('shows %s as %s', (uri, shown) => {
    expect(displayUri(uri, root)).toBe(shown)
  })

  it('groups locations by file in first-seen order, 1-based', () => {
    const locations = toLocations([
      { uri: `${root}/a.ts`, range: range(9, 4) },
      { uri: `${root}/b.ts`, range: range(0) },
      { uri: `${root}/a.ts`, range: range(2, 1) },
      { uri: `${root}/a.ts`, range: range(9, 4) },
    ])
    expect(locations).toHaveLength(3)
    expect(renderLsp({ kind: 'locations', locations, resolvedWorkspaceUri: root, truncated: false, withheld: 0 }, 100)).toBe('a.ts:10:5\na.ts:3:2\nb.ts:1:1')
    expect(renderLsp({ kind: 'locations', locations: [], resolvedWorkspaceUri: root, truncated: false, withheld: 0 }, 100)).toBe('No results.')
    expect(renderLsp({ kind: 'locations', locations, resolvedWorkspaceUri: root, truncated: false, withheld: 2 }, 100)).toBe(
      'a.ts:10:5\na.ts:3:2\nb.ts:1:1\n(2 locations withheld: in files the path rules do not let this call read.)',
    )
    expect(renderLsp({ kind: 'locations', locations: [], resolvedWorkspaceUri: root, truncated: false, withheld: 1 }, 100)).toBe(
      'No results.\n(1 location withheld: in files the path rules do not let this call read.)',
    )
  })

  it('reads LocationLinks at their selection range and drops malformed entries', () => {
    expect(
      toLocations([{ targetUri: `${root}/a.ts`, targetRange: range(1), targetSelectionRange: range(2, 3) }, { uri: 5 }, null, { uri: 'x', range: {} }]),
    ).toEqual([{ uri: `${root}/a.ts`, range: range(2, 3) }])
    expect(toLocations({ uri: `${root}/a.ts`, range: range(0) })).toHaveLength(1)
    expect(toLocations(null)).toEqual([])
  })

  it('joins hover contents of every form', () => {
    expect(toHover({ contents: { kind: 'markdown', value: '**x**' } })).toEqual({ contents: '**x**' })
    expect(toHover({ contents: ['plain', { language: 'ts', value: 'let x: number' }], range: range(0) })).toEqual({
      contents: 'plain\n\n```ts\nlet x: number\n```',
      range: range(0),
    })
    expect(toHover({ contents: '' })).toBeNull()
    expect(toHover(null)).toBeNull()
    expect(renderLsp({ kind: 'hover', hover: null, withheld: 0 }, 100)).toBe('No hover information.')
    expect(renderLsp({ kind: 'hover', hover: null, withheld: 1 }, 100)).toBe(
      'Hover withheld: the symbol is declared in a file the path rules do not let this call read.',
    )
  })

  it('flattens hierarchical symbols with their containers', () => {
    const symbols = toSymbols(
      [
        {
          name: 'Box',
          kind: 5,
          range: range(0),
          selectionRange: range(0, 6),
          children: [{ name: 'open', kind: 6, range: range(1), selectionRange: range(1, 2) }],
        },
      ],
      `${root}/a.ts`,
    )
    expect(renderLsp({ kind: 'symbols', symbols, resolvedWorkspaceUri: root, truncated: false, withheld: 0 }, 100)).toBe(
      'Box (class) a.ts:1:7\nBox.open (method) a.ts:2:3',
    )
    const flat = toSymbols([{ name: 'f', kind: 12, containerName: 'mod', location: { uri: `${root}/b.ts`, range: range(4) } }], `${root}/a.ts`)
    expect(flat).toEqual([{ name: 'f', kind: 'function', containerName: 'mod', uri: `${root}/b.ts`, range: range(4) }])
  })

  it('renders diagnostics with severity, source and code, and says when they may be stale', () => {
    const diagnostics = toDiagnostics([
      { range: range(4, 20), severity: 1, source: 'typescript', code: 2345, message: 'Bad argument.\nDetails here.' },
      { range: range(0), severity: 2, message: 'Unused.' },
    ])
    const text = renderLsp({ kind: 'diagnostics', uri: `${root}/a.ts`, diagnostics, upToDate: false, resolvedWorkspaceUri: root, truncated: false }, 100)
    expect(text).toMatchInlineSnapshot(`
      "a.ts:5:21: error [typescript 2345]: Bad argument.
          Details here.
      a.ts:1:1: warning: Unused.
      (The server has not finished checking the current text; these may be out of date. Call again shortly.)"
    `)
    expect(renderLsp({ kind: 'diagnostics', uri: `${root}/a.ts`, diagnostics: [], upToDate: true, resolvedWorkspaceUri: root, truncated: false }, 100)).toBe(
      'No diagnostics in a.ts.',
    )
  })
})
