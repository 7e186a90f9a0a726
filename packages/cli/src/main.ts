import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { commonOptions, describeOptions, parse } from './args.js'
import { commands, findCommand, type Command } from './commands/index.js'
import { CliError, EXIT, errorMessage } from './errors.js'
import { Output } from './output.js'

/** Where the command line reads and writes; tests and embedders can pass their own. */
export interface MainIo {
  output?: Output
  env?: NodeJS.ProcessEnv
  stdin?: NodeJS.ReadableStream
}

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
  return manifest.version
}

function generalHelp(table: readonly Command[]): string {
  const width = Math.max(...table.map((command) => command.name.length))
  return [
    'usage: cordage <command> [options]',
    '',
    'commands:',
    ...table.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'options for every command:',
    ...describeOptions(commonOptions),
    '',
    'Plugins come from ./cordage.yml (or the built-in preset). `cordage <command> --help` for details.',
  ].join('\n')
}

function commandHelp(command: Command): string {
  return [
    `usage: cordage ${command.name} ${command.usage}`.trimEnd(),
    '',
    command.summary,
    '',
    'options:',
    ...describeOptions({ ...command.options, ...commonOptions }),
    ...environmentHelp(command.environment),
  ].join('\n')
}

function environmentHelp(environment: Record<string, string> | undefined): string[] {
  if (!environment) return []
  const width = Math.max(...Object.keys(environment).map((name) => name.length))
  return ['', 'environment:', ...Object.entries(environment).map(([name, meaning]) => `  ${name.padEnd(width)}  ${meaning}`)]
}

/** Runs the `cordage` command line; resolves to the exit code (0 ok, 1 failed work, 2 usage or config error). */
export async function main(input: string[], io: MainIo = {}, table: readonly Command[] = commands): Promise<number> {
  const output = io.output ?? new Output()
  let argv: string[]
  try {
    argv = commonOptionsLast(input)
  } catch (error) {
    output.error(output.style('red', errorMessage(error)))
    return EXIT.usage
  }
  const [first] = argv
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    ;(first === undefined ? output.error.bind(output) : output.line.bind(output))(generalHelp(table))
    return first === undefined ? EXIT.usage : EXIT.ok
  }
  if (first === '--version' || first === '-V') {
    output.line(version())
    return EXIT.ok
  }
  const found = findCommand(argv, table)
  if (!found) {
    output.error(`cordage: unknown command "${first}"; available: ${table.map((command) => command.name).join(', ')}`)
    return EXIT.usage
  }
  const { command, words } = found
  try {
    const { values, positionals } = parse(argv.slice(words), { ...commonOptions, ...command.options })
    if (values.help) {
      output.line(commandHelp(command))
      return EXIT.ok
    }
    const cwd = resolve(typeof values.cwd === 'string' ? values.cwd : process.cwd())
    if (cwd !== process.cwd()) process.chdir(cwd)
    return await command.run({ values, positionals, output, cwd, env: io.env ?? process.env, stdin: io.stdin ?? process.stdin })
  } catch (error) {
    if (error instanceof CliError) {
      output.error(output.style('red', error.message))
      return error.exitCode
    }
    // Typed errors (a missing session file, a corrupt one) are reported without a stack.
    const { CordageError } = await import('@cordage/core')
    if (CordageError.is(error)) {
      output.error(output.style('red', `${error.message} (${error.code})`))
      return EXIT.failed
    }
    output.error(output.style('red', `cordage ${command.name}: ${error instanceof Error && process.env.CORDAGE_DEBUG ? error.stack : errorMessage(error)}`))
    return EXIT.failed
  }
}

/**
 * `cordage --cwd dir tools` reads as `cordage tools --cwd dir`: options every command takes may come before
 * the command's name. They move after it, so the command's own parser sees them; anything else before the
 * name is a usage error naming the option.
 */
function commonOptionsLast(argv: string[]): string[] {
  const leading: string[] = []
  let index = 0
  while (index < argv.length && argv[index]!.startsWith('-') && !['--help', '-h', '--version', '-V'].includes(argv[index]!)) {
    const [flag] = argv[index]!.split('=', 1)
    const option = Object.entries(commonOptions).find(([key, option]) => flag === `--${key}` || ('short' in option && flag === `-${option.short}`))
    if (!option)
      throw new CliError(
        `cordage: unknown option "${flag}" before the command; options before it: ${Object.keys(commonOptions)
          .map((key) => `--${key}`)
          .join(', ')}`,
      )
    const takesValue = option[1].type === 'string' && !argv[index]!.includes('=')
    leading.push(...argv.slice(index, index + (takesValue ? 2 : 1)))
    index += takesValue ? 2 : 1
  }
  return [...argv.slice(index), ...leading]
}
