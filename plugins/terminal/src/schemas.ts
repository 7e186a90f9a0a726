import Schema from 'schemastery'
import type { Infer } from '@cordage/core'

const nullable = <S extends Schema>(schema: S) => Schema.union([schema, Schema.const(null)]).required()

/** The public snapshot of a terminal session (no owner or internal bookkeeping). */
export const SessionSnapshotSchema = Schema.object({
  id: Schema.string().required().description('Session id, e.g. "term_1".'),
  command: Schema.string().required().description('What the session runs.'),
  cwd: Schema.string().required(),
  pid: Schema.natural().required().description('The session leader; every process of its session belongs to the terminal.'),
  cols: Schema.natural().required(),
  rows: Schema.natural().required(),
  state: Schema.union(['running', 'exited'] as const).required(),
  exitCode: nullable(Schema.number()),
  signal: nullable(Schema.string()),
  title: Schema.string().required().description('The window title the program set (escape sequences removed), or "".'),
  startedAt: Schema.string().required().description('ISO 8601.'),
  endedAt: nullable(Schema.string()),
})

/** What the terminal shows now. */
export const ScreenSchema = Schema.object({
  lines: Schema.array(Schema.string()).required().description('Visible rows, top to bottom; blank rows below the cursor and the last text are left out.'),
  cursor: Schema.object({ row: Schema.natural().required(), col: Schema.natural().required() }).required().description('1-based.'),
  cols: Schema.natural().required(),
  rows: Schema.natural().required(),
  alternate: Schema.boolean().required().description('A full-screen program (vi, top, less) has the alternate screen.'),
  title: Schema.string().required(),
})

/** Rows that scrolled off the top of the screen, by absolute row number. */
export const ScrollbackSchema = Schema.object({
  from: Schema.natural().required().description('Absolute row of lines[0].'),
  next: Schema.natural().required().description('Pass as `since` to continue.'),
  end: Schema.natural().required().description('Where the scrollback ends and the screen begins.'),
  lines: Schema.array(Schema.string()).required(),
  lost: Schema.natural().required().description('Rows asked for that the scrollback no longer holds.'),
  omitted: Schema.natural().required().description('Rows held but left out to bound the result.'),
})

const viewFields = {
  session: SessionSnapshotSchema.required(),
  screen: ScreenSchema.required(),
  scrollback: ScrollbackSchema.required(),
}

/** A bounded look at a session: its snapshot, the screen and a scrollback delta. */
export const ViewSchema = Schema.object(viewFields)

/** `terminal_send`: the view after waiting, and why the wait ended. */
export const SendSchema = Schema.object({
  ...viewFields,
  wait: Schema.object({
    reason: Schema.union(['matched', 'quiet', 'elapsed', 'timeout', 'exited', 'aborted'] as const).required(),
    waitedMs: Schema.natural().required(),
  }).required(),
})

/** `terminal_send` with `run_in_background`: the job that waits and then holds the result. */
export const SendBackgroundSchema = Schema.object({
  kind: Schema.const('background' as const).required(),
  jobId: Schema.string().required(),
  session: Schema.string().required().description('The session the input went to.'),
})

export type SessionSnapshot = Infer<typeof SessionSnapshotSchema>
export type ViewValue = Infer<typeof ViewSchema>
export type SendValue = Infer<typeof SendSchema>
export type SendBackgroundValue = Infer<typeof SendBackgroundSchema>
