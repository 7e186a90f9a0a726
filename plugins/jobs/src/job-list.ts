import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { describeJob } from './describe.js'
import type { JobTable } from './table.js'
import { JobSnapshotSchema } from '@cordage/services'

const Parameters = Schema.object({
  state: Schema.union(['running', 'exited', 'killed', 'failed'] as const).description('Only jobs in this state.'),
})

const Output = Schema.object({
  jobs: Schema.array(JobSnapshotSchema).required(),
})

/** `job_list`: public snapshots of the known jobs, oldest first. */
export function jobListTool(table: JobTable): ToolDefinition {
  return defineTool({
    name: 'job_list',
    description: 'List background jobs (running and recently finished) with their state, exit code and output size.',
    parameters: Parameters,
    output: {
      schema: Output,
      render: (args, value) => {
        if (!value.jobs.length) return [{ type: 'text', text: args.state ? `No ${args.state} jobs.` : 'No jobs.' }]
        return [{ type: 'text', text: value.jobs.map(describeJob).join('\n') }]
      },
    },
    concurrency: 'parallel',
    execute: (args) => ({ jobs: table.list().filter((job) => !args.state || job.state === args.state) }),
  })
}
