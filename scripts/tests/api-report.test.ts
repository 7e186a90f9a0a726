import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkApiReports } from '../api-report.mjs'

const roots: string[] = []
afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

const declarations = {
  'packages/demo/dist/index.d.ts': "export { greet } from './greet.js'\nexport type { Greeting } from './greet.js'\n",
  'packages/demo/dist/greet.d.ts': [
    '/** A greeting. */',
    'export interface Greeting {',
    '    text: string;',
    '}',
    '/** Greets `name`. */',
    'export declare function greet(name: string): Greeting;',
    "declare module './greet.js' {",
    '    /** Options every greeting takes. */',
    '    interface Greeting {',
    '        loud?: boolean;',
    '    }',
    '}',
    '',
  ].join('\n'),
}

/** A workspace with one built package, `@cordage/demo`, whose declarations are `files` over the defaults. */
async function workspace(files: Record<string, string> = {}): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cordage-api-test-'))
  roots.push(root)
  const all: Record<string, string> = {
    'tsconfig.base.json': JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', strict: true, composite: true },
    }),
    'packages/demo/package.json': JSON.stringify({ name: '@cordage/demo', version: '0.1.0', types: './dist/index.d.ts' }),
    ...declarations,
    ...files,
  }
  for (const [path, content] of Object.entries(all)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), content)
  }
  return root
}

const check = (root: string, update = false) => checkApiReports(root, { update, packages: ['demo'] })

describe('the public API reports', { timeout: 120_000 }, () => {
  it('writes a report of the exports and the module augmentations, which then checks clean', async () => {
    const root = await workspace()
    expect(check(root, true)).toEqual([])
    const report = await readFile(join(root, 'packages/demo/demo.api.md'), 'utf8')
    expect(report).toContain('## API Report File for "@cordage/demo"')
    expect(report).toContain('export function greet(name: string): Greeting;')
    expect(report).toContain(
      "## Module augmentations\n\n```ts\n// greet.d.ts\ndeclare module './greet.js' {\n    interface Greeting {\n        loud?: boolean;",
    )
    expect(report).not.toContain('Options every greeting takes')
    expect(check(root)).toEqual([])
  })

  it('fails with the difference when an export changes without its report, until the report is updated', async () => {
    const root = await workspace()
    check(root, true)
    await writeFile(join(root, 'packages/demo/dist/index.d.ts'), `${declarations['packages/demo/dist/index.d.ts']}export declare const farewell: string;\n`)
    const [problem, ...rest] = check(root)
    expect(rest).toEqual([])
    expect(problem).toContain('packages/demo/demo.api.md: the public API of @cordage/demo changed; run `pnpm api:update` and commit the report')
    expect(problem).toContain('+export const farewell: string;')
    check(root, true)
    expect(check(root)).toEqual([])
  })

  it('fails when only an augmentation changes (API Extractor alone leaves them out), but not for a comment', async () => {
    const root = await workspace()
    check(root, true)
    const greet = join(root, 'packages/demo/dist/greet.d.ts')
    await writeFile(greet, declarations['packages/demo/dist/greet.d.ts'].replace('/** Options every greeting takes. */', '/** Reworded. */'))
    expect(check(root)).toEqual([])
    await writeFile(greet, declarations['packages/demo/dist/greet.d.ts'].replace('loud?: boolean;', 'loud?: boolean;\n        quiet?: boolean;'))
    const [problem] = check(root)
    expect(problem).toContain('+        quiet?: boolean;')
  })

  it('says to build first when a package has no declarations', async () => {
    const root = await workspace()
    await rm(join(root, 'packages/demo/dist'), { recursive: true })
    expect(() => check(root)).toThrow('packages/demo/dist/index.d.ts is missing: run `pnpm build` first')
  })
})
