import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { afterAll } from 'vitest'
import Schema from 'schemastery'
import { defineTool, type ContentBlock, type ToolExecutionResult } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import type { Context } from 'cordis'
import * as Policy from '../src/index.js'

/**
 * A workspace with a secret and the ways to reach it by another name:
 * root/ secret.txt public.txt alias.txt→secret.txt sub/ (note.txt) hop→vault/inner vault/ (key.pem, inner/)
 * outlink→<outside>, loop→loop, and <outside>/ (outside.txt) next to the root.
 */
export function workspace() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'policy-paths-')))
  const root = join(base, 'root')
  const outside = join(base, 'outside')
  for (const dir of [root, join(root, 'sub'), join(root, 'vault', 'inner'), outside]) mkdirSync(dir, { recursive: true })
  writeFileSync(join(root, 'secret.txt'), 'TOP-SECRET\n')
  writeFileSync(join(root, 'public.txt'), 'hello\n')
  writeFileSync(join(root, 'sub', 'note.txt'), 'a note\n')
  writeFileSync(join(root, 'vault', 'key.pem'), 'PRIVATE-KEY\n')
  writeFileSync(join(outside, 'outside.txt'), 'OUTSIDE\n')
  symlinkSync('secret.txt', join(root, 'alias.txt'))
  symlinkSync('vault/inner', join(root, 'hop'))
  symlinkSync(outside, join(root, 'outlink'))
  symlinkSync('loop', join(root, 'loop'))
  afterAll(() => rmSync(base, { recursive: true, force: true }))
  return { base, root, outside }
}

const text = (value: string) => [{ type: 'text', text: value }] as ContentBlock[]

/** Real file tools over `root` that declare their path arguments (the kernel resolves what they open). */
export function fileTools(root: string) {
  const read = defineTool({
    name: 'read',
    description: 'Reads a file.',
    parameters: Schema.object({ path: Schema.string().required() }),
    output: { schema: Schema.object({ text: Schema.string().required() }), render: (_args, value) => text(value.text) },
    paths: [{ pointer: '/path', access: 'read' }],
    execute: (args) => ({ text: readFileSync(resolve(root, args.path), 'utf8') }),
  })
  const grep = defineTool({
    name: 'grep',
    description: 'Searches files under a directory.',
    parameters: Schema.object({ pattern: Schema.string().required(), path: Schema.string() }),
    output: { schema: Schema.object({ matches: Schema.array(Schema.string()).required() }), render: (_args, value) => text(value.matches.join('\n')) },
    paths: [{ pointer: '/path', access: 'read', default: '.' }],
    execute: (args) => ({ matches: search(resolve(root, args.path ?? '.'), new RegExp(args.pattern)).map((file) => relative(root, file)) }),
  })
  const write = defineTool({
    name: 'write',
    description: 'Writes a file.',
    parameters: Schema.object({ path: Schema.string().required(), content: Schema.string().required() }),
    output: { schema: Schema.object({ written: Schema.natural().required() }), render: (_args, value) => text(`wrote ${value.written} bytes`) },
    paths: [{ pointer: '/path', access: 'write' }],
    execute: (args) => (writeFileSync(resolve(root, args.path), args.content), { written: args.content.length }),
  })
  const copy = defineTool({
    name: 'copy',
    description: 'Copies a file.',
    parameters: Schema.object({ from: Schema.string().required(), to: Schema.string().required() }),
    output: { schema: Schema.object({ copied: Schema.boolean().required() }), render: () => text('copied') },
    paths: [
      { pointer: '/from', access: 'read' },
      { pointer: '/to', access: 'write' },
    ],
    execute: (args) => (writeFileSync(resolve(root, args.to), readFileSync(resolve(root, args.from))), { copied: true }),
  })
  // A raw tool whose path argument may be anything: the policy must fail closed on what it cannot resolve.
  const loose = {
    name: 'loose',
    description: 'Takes a path of any JSON type.',
    parameters: { type: 'object' as const, properties: { path: {} } },
    output: { schema: { type: 'null' as const }, render: () => text('ok') },
    paths: [{ pointer: '/path', access: 'read' as const }],
    execute: () => null,
  }
  return { name: 'path-test-tools', inject: ['tools'], apply: (ctx: Context) => [read, grep, write, copy, loose].forEach((tool) => ctx.tools.register(tool)) }
}

function search(path: string, pattern: RegExp): string[] {
  if (!statSync(path).isDirectory()) return pattern.test(readFileSync(path, 'utf8')) ? [path] : []
  return readdirSync(path).flatMap((entry) => search(join(path, entry), pattern))
}

/** A context with the file tools over `root` and a policy with `rules` rooted there. */
export async function setupPaths(root: string, rules: Policy.RuleConfig[]) {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(fileTools(root))
  const fiber = await ctx.plugin(Policy, { root, rules })
  return { ctx, fiber }
}

export const code = (result: ToolExecutionResult) => (result.isError ? result.error.info?.code : 'OK')
