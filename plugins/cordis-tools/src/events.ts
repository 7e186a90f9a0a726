/** One event of the runtime: its dispatch mode and listener signature. */
export interface EventEntry {
  name: string
  mode: 'emit' | 'waterfall'
  signature: string
  note: string
}

/** The events Cordage defines (the registry's pipeline and the shared service events). */
export const EVENTS: readonly EventEntry[] = [
  {
    name: 'tools/pre-execute',
    mode: 'waterfall',
    signature: '(exec, next) => PreDecision',
    note: 'allow, deny or ask before a call; call next() or the calls after you are decided by you alone',
  },
  {
    name: 'tools/execute',
    mode: 'waterfall',
    signature: '(exec, next) => Promise<ToolExecutionResult>',
    note: 'around the body (timeouts, retries, caching); return next() unless you replace the result',
  },
  {
    name: 'tools/post-execute',
    mode: 'waterfall',
    signature: '(exec, result, next) => PostDecision',
    note: 'accept, replace content, replace value or block after a call',
  },
  { name: 'tools/result', mode: 'emit', signature: '(exec, result) => void', note: 'observe every final result' },
  { name: 'tools/changed', mode: 'emit', signature: '() => void', note: 'a tool was registered or unregistered' },
  { name: 'jobs/completed', mode: 'emit', signature: '(job: JobSnapshot) => void', note: 'a background job ended' },
  {
    name: 'agent/notice',
    mode: 'emit',
    signature: '(notice: { source, text, audience? }) => void',
    note: 'running agents (those in audience, when set) read the text before their next model request',
  },
  {
    name: 'agent/run',
    mode: 'emit',
    signature: '(event: { type, agent? }) => void',
    note: "an agent loop's run started or ended (per-root-run limits key on it)",
  },
  { name: 'agent/child', mode: 'emit', signature: '(event: ChildRunEvent) => void', note: 'a child run (subagent, workflow agent) started or ended' },
]

// Cordage's own namespaces and Cordis's internals: mounted code may listen to what they carry (as JSON),
// but never speak in them: an emitted `agent/notice` would reach every running agent's model.
const RESERVED_NAMESPACE = /^(tools|agent|jobs|plan|todo|internal)\//
const EVENT_NAME = /^[A-Za-z][\w-]*(\/[\w-]+)*$/

/** How a mounted listener joins an event: as a pre/post-execute decision, or as an observer given JSON copies of the arguments. */
export type ListenMode = 'pre-execute' | 'post-execute' | 'observe'

/** How mounted code may listen to `name`, or why it may not (a model-readable reason). */
export function listenMode(name: string): ListenMode | { refused: string } {
  if (!EVENT_NAME.test(name) || name.length > 100) return { refused: `"${name.slice(0, 100)}" is not an event name` }
  if (name === 'tools/pre-execute') return 'pre-execute'
  if (name === 'tools/post-execute') return 'post-execute'
  if (name === 'tools/execute' || name === 'tools/present')
    return { refused: `${name} wraps tool bodies and presentation and is withheld from mounted plugins; use tools/pre-execute or tools/post-execute` }
  if (name.startsWith('internal/')) return { refused: `${name} is internal to the plugin runtime` }
  return 'observe'
}

/** Why mounted code may not emit `name`, or undefined when it may. */
export function emitRefusal(name: string): string | undefined {
  if (!EVENT_NAME.test(name) || name.length > 100) return `"${name.slice(0, 100)}" is not an event name`
  if (RESERVED_NAMESPACE.test(name)) return `${name} belongs to the runtime; mounted plugins emit events of their own (e.g. "myplugin/tick")`
  return undefined
}
