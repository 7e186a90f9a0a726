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
