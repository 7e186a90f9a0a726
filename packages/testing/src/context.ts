import { Context } from 'cordis'
import { ToolRegistry } from '@cordage/registry'

/** One captured log line. */
export interface LogRecord {
  name: string
  type: 'error' | 'info' | 'warn' | 'debug'
  text: string
}

export interface TestContextOptions {
  /** Registry config (e.g. `{ timeoutGraceMs: 50 }`). */
  registry?: Partial<ToolRegistry.Config>
  /** Print warnings and errors to the test output (default true). */
  print?: boolean
}

/** A real Cordis `Context` with the tool registry loaded and logs captured in `logs`. */
export interface TestContext extends Context {
  logs: LogRecord[]
}

/** Creates a `Context` with `ctx.tools` ready and a logger exporter wired to the test output. */
export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const ctx = new Context() as TestContext
  const logs: LogRecord[] = []
  ctx.logs = logs
  const print = options.print ?? true
  ctx.logger.exporter({
    colors: false,
    levels: { default: 3 },
    export(message) {
      const text = message.args
        .map((arg) => (typeof arg === 'string' ? arg : arg instanceof Error ? (arg.stack ?? arg.message) : JSON.stringify(arg)))
        .join(' ')
      logs.push({ name: message.name, type: message.type, text })
      if (print && (message.type === 'warn' || message.type === 'error')) console.warn(`[${message.name}] ${message.type}: ${text}`)
    },
  })
  await ctx.plugin(ToolRegistry, options.registry ?? {})
  return ctx
}
