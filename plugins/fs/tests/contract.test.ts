import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { testToolContract } from '@cordage/testing'
import * as fs from '../src/index.js'
import { tempDir } from './helpers.js'

async function config() {
  const root = await tempDir()
  await writeFile(join(root, 'notes.txt'), 'alpha\nbeta\ngamma\n')
  await writeFile(join(root, 'big.txt'), Array.from({ length: 30_000 }, (_, i) => `line ${i} ${'x'.repeat(60)}`).join('\n'))
  return { root }
}

testToolContract(fs, {
  config,
  cases: [
    { tool: 'read', arguments: { path: 'notes.txt' } },
    { name: 'read of a large file stays within the content bound', tool: 'read', arguments: { path: 'big.txt' } },
    { tool: 'read', arguments: { path: 'notes.txt', offset: 2, limit: 1 } },
    { tool: 'read', arguments: { path: 'missing.txt' }, expect: 'error' },
    { tool: 'read', arguments: { path: '../outside.txt' }, expect: 'error' },
    { tool: 'read', arguments: { path: 'notes.txt', offset: 0 }, expect: 'error' },
    { tool: 'write', arguments: { path: 'new/file.txt', content: 'hello\n' } },
    { name: 'write over an unread file is refused', tool: 'write', arguments: { path: 'notes.txt', content: 'x' }, expect: 'error' },
    { tool: 'edit', arguments: { path: 'notes.txt', old_string: 'beta', new_string: 'BETA' }, expect: 'error' },
    { tool: 'edit', arguments: { path: 'notes.txt', old_string: '', new_string: 'x' }, expect: 'error' },
    { tool: 'glob', arguments: { pattern: '*.txt' } },
    { tool: 'glob', arguments: { pattern: '*.nothing' } },
    { tool: 'grep', arguments: { pattern: 'line 1\\d+', context: 2 } },
    { tool: 'grep', arguments: { pattern: '(unclosed' }, expect: 'error' },
    { tool: 'grep', arguments: { pattern: 'a', path: '/etc' }, expect: 'error' },
  ],
})
