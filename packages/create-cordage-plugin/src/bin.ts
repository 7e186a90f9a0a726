#!/usr/bin/env node
import { relative } from 'node:path'
import { parseArgs } from 'node:util'
import { ScaffoldError } from './errors.js'
import { scaffold } from './scaffold.js'

const USAGE = `Usage: npm init cordage-plugin <name> [-- --directory <dir>]

Creates a Cordage tool package: one example tool with its output schema, renderer, errors and strict
config, a README, contract tests, a benchmark and a build.

  <name>              word-stats, cordage-plugin-word-stats or @me/word-stats
  --directory <dir>   where to write it (default: the package name without its scope)
  --workspace         inside the Cordage repository: plugins/<name>, @cordage/plugin-<name>`

function main(argv: string[]): number {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { directory: { type: 'string' }, workspace: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    })
  } catch (error) {
    console.error(`create-cordage-plugin: ${(error as Error).message}\n\n${USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  if (positionals.length !== 1) {
    console.error(`create-cordage-plugin: expected one name, got ${positionals.length}\n\n${USAGE}`)
    return 2
  }
  try {
    const result = scaffold({ name: positionals[0]!, directory: values.directory, workspace: values.workspace })
    const where = relative(process.cwd(), result.directory) || '.'
    console.log(`Created ${result.names.packageName} in ${where}: tool ${result.names.tool}, ${result.files.length} files.\n`)
    console.log(
      values.workspace
        ? `Next:\n  pnpm install\n  pnpm build && pnpm test --project ${where}`
        : `Next:\n  cd ${where}\n  npm install\n  npm test\n\nName it in cordage.yml as ${result.names.packageName} (or ${result.names.name}); publish with npm publish.`,
    )
    return 0
  } catch (error) {
    if (error instanceof ScaffoldError) {
      console.error(`create-cordage-plugin: ${error.message}`)
      return 2
    }
    throw error
  }
}

process.exitCode = main(process.argv.slice(2))
