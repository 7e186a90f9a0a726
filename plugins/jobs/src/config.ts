import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'

/** Plugin name. */
export const name = 'jobs'
/** Registers its tools in the registry. Provides `jobs` (`JobsService`, declared in `@cordage/services`). */
export const inject = ['tools']

/** Limits of the jobs service (see the README's Config table). */
export interface Config {
  headChars: number
  tailChars: number
  maxFinishedJobs: number
  killTimeoutMs: number
}

/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    headChars: Schema.natural().default(20_000).description("Characters kept from the start of each job's output."),
    tailChars: Schema.natural().min(1).default(1_000_000).description("Characters kept from the end of each job's output (a rolling window)."),
    maxFinishedJobs: Schema.natural().min(1).default(50).description('Finished jobs kept readable; older ones are forgotten.'),
    killTimeoutMs: Schema.natural().min(1).default(5_000).description("How long a killed job's owner may take to report its end."),
  }),
)
