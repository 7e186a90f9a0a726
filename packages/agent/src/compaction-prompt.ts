/** The request that asks the model for a summary, written for coding work (what must survive to continue). */
export const COMPACTION_PROMPT = `The conversation so far is about to be replaced by a summary, and the work will continue from that summary alone. Write it now. Do not call any tools.

Use these sections:
1. Task: what the user asked for and every constraint they set, in their words where the wording matters.
2. Files: each file read, created or changed, with what changed in it and why (paths exact).
3. Decisions: the technical decisions taken and their reasons; errors met and how they were resolved.
4. State: what is done and verified, what is in progress, and the todo list with each item's status.
5. Next: the very next step, precisely (command, file, function).

Be specific: names, paths, commands, values and error messages. Write only the summary.`

/** How the summary is introduced in the conversation that continues from it. */
export function summaryText(summary: string): string {
  return `The conversation before this point was compacted to save context. Its summary:\n\n${summary}`
}

/** What a cleared tool result says instead of its content. */
export const CLEARED_NOTE = '[tool result cleared to save context; run the tool again if it is needed]'
