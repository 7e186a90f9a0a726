import type * as Pty from 'node-pty'
import { CordageError, errorMessage } from '@cordage/core'

/** The node-pty module (its `spawn` and the `IPty` it returns). */
export type PtyModule = typeof Pty

/** node-pty's native addon is missing (not installed, or its build failed): the plugin cannot load. */
export class TerminalUnavailableError extends CordageError {
  constructor(reason: string) {
    super(
      'TERMINAL_UNAVAILABLE',
      `terminal: the native module node-pty could not be loaded (${reason}). It is an optional dependency whose addon is compiled at install: ` +
        'install make, a C++ compiler and python3, then run `pnpm install` again (where Node was installed by the system package manager and ' +
        '/usr/include/node exists, `npm_config_nodedir=/usr pnpm install` builds against those headers instead of downloading them). ' +
        'Every other plugin works without it.',
    )
  }
}

/**
 * Imports node-pty once, when the plugin module loads, without letting a failure escape: the import
 * fails when the optional dependency was skipped, and node-pty itself throws when its compiled addon is
 * absent. The plugin's `apply` reports the reason.
 */
async function importPty(): Promise<PtyModule | string> {
  try {
    const module = (await import('node-pty')) as PtyModule & { default?: PtyModule }
    const pty = module.default ?? module
    if (typeof pty.spawn !== 'function') return 'it has no spawn function'
    return pty
  } catch (error) {
    const message = errorMessage(error)
    return message.split('\n')[0]!.slice(0, 300)
  }
}

const loaded = await importPty()

/** node-pty, or a {@link TerminalUnavailableError} naming what is missing. */
export function loadPty(): PtyModule {
  if (typeof loaded === 'string') throw new TerminalUnavailableError(loaded)
  return loaded
}

/** Why node-pty cannot be used here, or undefined when it can (for tests that need a real terminal). */
export function ptyProblem(): string | undefined {
  return typeof loaded === 'string' ? loaded : undefined
}
