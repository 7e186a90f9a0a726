// A Verdaccio registry on loopback for the publishing test, run inside the test's own process (so no
// registry process can outlive the test), and the child processes that talk to it.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import type { Server } from 'node:http'
import { delimiter, dirname, join } from 'node:path'
import { runServer } from 'verdaccio'

/** A running registry: its URL, a publish token, an npmrc holding both, and how to stop it. */
export interface LocalRegistry {
  url: string
  npmrc: string
  close(): Promise<void>
}

/** What the registry serves without asking the uplink: the packages this repository publishes. */
const LOCAL_ONLY = ['@cordage/*', 'create-cordage-plugin', 'cordage-plugin-*']

/**
 * Starts Verdaccio on 127.0.0.1 (a free port) with its storage under `dir`. Packages named like ours
 * are only ever the ones published to it (never a namesake from the uplink); everything else is
 * proxied to `uplink`.
 */
export async function startRegistry(dir: string, uplink: string): Promise<LocalRegistry> {
  const access = { access: '$all', publish: '$authenticated', unpublish: '$authenticated' }
  const server: Server = await runServer({
    self_path: join(dir, 'config.yaml'),
    storage: join(dir, 'storage'),
    auth: { htpasswd: { file: join(dir, 'htpasswd'), max_users: 1 } },
    uplinks: { upstream: { url: uplink, timeout: '60s', max_fails: 5 } },
    packages: { ...Object.fromEntries(LOCAL_ONLY.map((pattern) => [pattern, access])), '**': { ...access, proxy: 'upstream' } },
    log: { type: 'stdout', format: 'pretty', level: 'error' },
    web: { enable: false },
    max_body_size: '200mb',
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as { port: number }
  const url = `http://127.0.0.1:${port}/`
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  try {
    const response = await fetch(`${url}-/user/org.couchdb.user:publisher`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'publisher', password: 'publisher-password' }),
    })
    const { token } = (await response.json()) as { token?: string }
    if (!token) throw new Error(`the registry gave no token (HTTP ${response.status})`)
    const npmrc = join(dir, 'npmrc')
    writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`)
    return { url, npmrc, close }
  } catch (error) {
    await close()
    throw error
  }
}

/**
 * The environment of a user's shell: PATH without any `node_modules/.bin` (the workspace's binaries
 * must not stand in for what a package failed to install), HOME (the npm cache and the user's npm
 * settings), no NODE_PATH, nothing from the test runner or pnpm; plus `extra`.
 */
export function userEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => entry && !entry.includes('node_modules/.bin'))
    .join(delimiter)
  const environment: NodeJS.ProcessEnv = { PATH: path, HOME: process.env.HOME, LANG: process.env.LANG ?? 'C.UTF-8', NO_COLOR: '1', CI: 'true' }
  // Native addons (node-pty) compile against the running Node's own headers rather than downloading them.
  const prefix = dirname(dirname(process.execPath))
  const nodedir = process.env.npm_config_nodedir ?? (existsSync(join(prefix, 'include/node/node.h')) ? prefix : undefined)
  if (nodedir) environment.npm_config_nodedir = nodedir
  if (process.env.TMPDIR) environment.TMPDIR = process.env.TMPDIR
  return { ...environment, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', ...extra }
}

export interface Outcome {
  code: number | null
  stdout: string
  stderr: string
}

const running = new Set<ChildProcess>()

/** Kills every command still running, with the processes it started (each runs in its own process group). */
export function killRunning(): void {
  for (const child of running) killGroup(child)
  running.clear()
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL')
  } catch {
    // Already gone.
  }
}
// A worker that exits without running the test's cleanup still takes its commands with it.
process.once('exit', killRunning)

/** Runs `command` and resolves with its exit code and output; `timeoutMs` is a hang detector that kills it. */
export function runCommand(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    running.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk) => (stdout += chunk))
    child.stderr!.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${options.timeoutMs} ms]`
      killGroup(child)
    }, options.timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      running.delete(child)
      reject(error)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      running.delete(child)
      resolve({ code, stdout, stderr })
    })
  })
}

/** Like `runCommand`, but a non-zero exit throws with the command's output (the failure a reader needs). */
export async function mustRun(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Outcome> {
  const outcome = await runCommand(command, args, options)
  if (outcome.code !== 0)
    throw new Error(`\`${command} ${args.join(' ')}\` in ${options.cwd} exited ${outcome.code}\n--- stdout\n${outcome.stdout}\n--- stderr\n${outcome.stderr}`)
  return outcome
}
