import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { describeJob } from './describe.js'
import type { CallerLineage, JobTable } from './table.js'
import { JobSnapshotSchema } from '@cordage/services'

/** The largest `max_chars` a call may ask for (keeps one result well inside the content budget). */
export const MAX_READ_CHARS = 30_000

const Parameters = Schema.object({
  job_id: Schema.string().required().description('The job id, e.g. "job_1".'),
  offset: Schema.natural().default(0).description('Absolute character offset to read from: 0, or the nextOffset of your last read.'),
  max_chars: Schema.natural().min(1).max(MAX_READ_CHARS).default(20_000).description('Most characters to return.'),
  wait_ms: Schema.natural().max(600_000).default(0).description('Block up to this long until output past offset exists or the job ends.'),
})

const Output = Schema.object({
  job: JobSnapshotSchema.required(),
  offset: Schema.natural().required().description('Absolute offset of the first character of output.'),
  nextOffset: Schema.natural().required().description('Pass as offset to continue.'),
  output: Schema.string().required(),
  droppedChars: Schema.natural().required().description('Characters between the requested offset and `offset` that are no longer kept.'),
  more: Schema.boolean().required().description('Output past nextOffset is already available.'),
})

/** `job_output`: incremental, offset-addressed reads of a job's output, optionally waiting for more. */
export function jobOutputTool(table: JobTable, lineage: CallerLineage): ToolDefinition {
  return defineTool({
    name: 'job_output',
    description:
      "Read a background job's output (stdout and stderr interleaved) from a character offset. Returns the new output, nextOffset to continue from, and the job state.",
    parameters: Parameters,
    output: {
      schema: Output,
      render: (args, value) => {
        const lines = [describeJob(value.job)]
        if (value.droppedChars) lines.push(`[… ${value.droppedChars} chars dropped; kept output resumes at offset ${value.offset} …]`)
        lines.push(value.output ? value.output.replace(/\n$/, '') : '(no new output)')
        const next = `job_output { "job_id": "${args.job_id}", "offset": ${value.nextOffset} }`
        if (value.more) lines.push(`(more output available: ${next})`)
        else if (value.job.state === 'running') lines.push(`(still running; continue with ${next})`)
        else lines.push(`(end of output at offset ${value.nextOffset})`)
        return [{ type: 'text', text: lines.join('\n') }]
      },
    },
    concurrency: 'parallel',
    async execute(args, exec) {
      table.checkAccess(args.job_id, lineage(exec.agent))
      await table.wait(args.job_id, args.offset, args.wait_ms, exec.signal)
      const read = table.read(args.job_id, args.offset, args.max_chars)
      return { job: read.job, offset: read.offset, nextOffset: read.nextOffset, output: read.text, droppedChars: read.dropped, more: read.more }
    },
  })
}
