import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { describeJob } from './describe.js'
import type { CallerLineage, JobTable } from './table.js'
import { JobSnapshotSchema } from '@cordage/services'

const Parameters = Schema.object({
  state: Schema.union(['running', 'exited', 'killed', 'failed'] as const).description('Only jobs in this state.'),
})

const Output = Schema.object({
  jobs: Schema.array(JobSnapshotSchema).required(),
})

/** `job_list`: public snapshots of the jobs the calling agent may use, oldest first. */
export function jobListTool(table: JobTable, lineage: CallerLineage): ToolDefinition {
  return defineTool({
    name: 'job_list',
    description:
      'List your background jobs (running and recently finished; those of subagents you started included) with their state, exit code and output size.',
    parameters: Parameters,
    output: {
      schema: Output,
      render: (args, value) => {
        if (!value.jobs.length) return [{ type: 'text', text: args.state ? `No ${args.state} jobs.` : 'No jobs.' }]
        return [{ type: 'text', text: value.jobs.map(describeJob).join('\n') }]
      },
    },
    concurrency: 'parallel',
    execute: (args, exec) => ({ jobs: table.visible(lineage(exec.agent)).filter((job) => !args.state || job.state === args.state) }),
  })
}
