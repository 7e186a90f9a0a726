import type { Options, Values } from '../args.js'
import type { Output } from '../output.js'

/** What a command receives after its words and options are parsed. */
export interface CommandInput {
  values: Values
  positionals: string[]
  output: Output
  /** The working directory (after `--cwd`). */
  cwd: string
  env: NodeJS.ProcessEnv
  stdin: NodeJS.ReadableStream
}

/** One entry of the command table: the words that select it, its help and its options. */
export interface Command {
  /** The words that select it: `run`, or `mcp serve` for a subcommand. */
  name: string
  /** One line for `cordage --help`. */
  summary: string
  /** Arguments after the name, e.g. `"<task>"`. */
  usage: string
  /** Options beyond the common ones (`--cwd`, `--config`, `--verbose`, `--help`). */
  options: Options
  /** Environment variables the command reads, with what each does (listed by `--help`). */
  environment?: Record<string, string>
  /** Runs the command; resolves to the exit code. Throw `CliError` for usage and configuration errors. */
  run(input: CommandInput): Promise<number>
}
