import { testToolContract } from '@cordage/testing'
import * as lsp from '../src/index.js'
import { fakeServer, project } from './helpers.js'

// A real child process speaking JSON-RPC (see fixtures/fake-server.mjs) keeps the suite fast; the
// TypeScript server is exercised in typescript.test.ts.
const server = fakeServer('symbols')

testToolContract(lsp, {
  config: async () => ({ root: await project({ 'a.txt': 'one\ntwo\n', 'b.rb': 'x\n' }), servers: [server], diagnosticsWaitMs: 200 }),
  cases: [
    { tool: 'lsp', arguments: { operation: 'symbols', path: 'a.txt' } },
    {
      name: 'lsp definition with 130 locations stays within the content bound',
      tool: 'lsp',
      arguments: { operation: 'definition', path: 'a.txt', line: 1, character: 1 },
    },
    { tool: 'lsp', arguments: { operation: 'diagnostics', path: 'a.txt' } },
    { tool: 'lsp', arguments: { operation: 'definition', path: 'b.rb', line: 1, character: 1 }, expect: 'error' },
    { tool: 'lsp', arguments: { operation: 'hover', path: 'a.txt' }, expect: 'error' },
    { tool: 'lsp', arguments: { operation: 'symbols', path: '../escape.txt' }, expect: 'error' },
  ],
})
