import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { describeJob } from './describe.js'
import type { CallerLineage, JobTable } from './table.js'
import { JobSnapshotSchema } from '@cordage/services'

const Parameters = Schema.object({
  job_id: Schema.string().required().description('The job to stop, e.g. "job_1".'),
})

const Output = Schema.object({
  killed: Schema.boolean().required().description('False when the job had already ended.'),
  job: JobSnapshotSchema.required(),
})

/** `job_kill`: stops a running job (its whole process tree, for bash) and returns its final snapshot. */
export function jobKillTool(table: JobTable, lineage: CallerLineage): ToolDefinition {
  return defineTool({
    name: 'job_kill',
    description: "Stop a running background job and everything it started. Returns the job's final state; its output stays readable with job_output.",
    parameters: Parameters,
    output: {
      schema: Output,
      render: (_args, value) => [{ type: 'text', text: `${value.killed ? 'Killed' : 'Already finished, nothing to kill'}: ${describeJob(value.job)}` }],
    },
    async execute(args, exec) {
      table.checkAccess(args.job_id, lineage(exec.agent))
      const killed = await table.kill(args.job_id, 'killed by job_kill')
      return { killed, job: table.snapshot(args.job_id) }
    },
  })
}
